"""The ``authorizer`` library's CEL types, as protocol-buffer messages.

What it is: upstream's ``k8s.io/apiserver/pkg/cel/library/authz.go`` declares five opaque
types, ``kubernetes.authorization.Authorizer``, ``PathCheck``, ``GroupCheck``,
``ResourceCheck`` and ``Decision``. As for the other opaque Kubernetes types
(``api.celtypes``), each is a message of that exact full name, whose fields hold what
upstream's Go value holds:

* ``Authorizer``: the service account it checks for (``authorizer.serviceAccount(ns,
  name)``), empty for the request's own user;
* ``PathCheck``: its authorizer and path; ``GroupCheck``: its authorizer and group;
* ``ResourceCheck``: its group check, resource, subresource, namespace, name, field and
  label selectors;
* ``Decision``: allowed, the reason, and the error text if the check failed.

Who uses it: ``api.celtypes`` adds this file to its descriptor pool; ``api.celauthz``
builds and reads the values. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from google.protobuf import descriptor_pb2

PACKAGE: Final = "kubernetes.authorization"
AUTHORIZER_NAME: Final = f"{PACKAGE}.Authorizer"
PATH_CHECK_NAME: Final = f"{PACKAGE}.PathCheck"
GROUP_CHECK_NAME: Final = f"{PACKAGE}.GroupCheck"
RESOURCE_CHECK_NAME: Final = f"{PACKAGE}.ResourceCheck"
DECISION_NAME: Final = f"{PACKAGE}.Decision"

_FIELD: Final = descriptor_pb2.FieldDescriptorProto
_STRING: Final = _FIELD.TYPE_STRING
_BOOL: Final = _FIELD.TYPE_BOOL

_MESSAGES: Final[tuple[tuple[str, tuple[tuple[str, str], ...]], ...]] = (
    ("Authorizer", (("service_account_namespace", ""), ("service_account_name", ""))),
    ("PathCheck", (("authorizer", AUTHORIZER_NAME), ("path", ""))),
    ("GroupCheck", (("authorizer", AUTHORIZER_NAME), ("group", ""))),
    (
        "ResourceCheck",
        (
            ("group_check", GROUP_CHECK_NAME),
            ("resource", ""),
            ("subresource", ""),
            ("namespace", ""),
            ("name", ""),
            ("field_selector", ""),
            ("label_selector", ""),
        ),
    ),
    ("Decision", (("allowed", "bool"), ("reason", ""), ("error", ""))),
)
"""Each message's fields in order: a message type's full name, ``bool``, or ``""`` for a
string."""


def file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """The ``kubernetes.authorization`` file of the descriptor pool."""
    described = descriptor_pb2.FileDescriptorProto(
        name="kubeprio/cel/authorization.proto", package=PACKAGE, syntax="proto3"
    )
    for name, fields in _MESSAGES:
        message = described.message_type.add(name=name)
        for number, (field_name, kind) in enumerate(fields, start=1):
            field = message.field.add(name=field_name, number=number, label=_FIELD.LABEL_OPTIONAL)
            if kind == "bool":
                field.type = _BOOL
            elif kind:
                field.type = _FIELD.TYPE_MESSAGE
                field.type_name = "." + kind
            else:
                field.type = _STRING
    return described
