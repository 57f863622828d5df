"""The opaque CEL types of Kubernetes' libraries, as values the CEL runtime can carry.

What it is: upstream's ``k8s.io/apiserver/pkg/cel`` declares ``kubernetes.Quantity``,
``kubernetes.URL``, ``net.IP`` and ``net.CIDR`` as Go types that cel-go carries
opaquely. ``cel-expr-python`` cannot carry a Python object through an expression (a
function returning one fails with ``Non-CEL value type``, and abstract types are
``Unimplemented``), but it does carry protocol-buffer messages from a descriptor pool.
So each type is a one-field message of that exact full name, built here at import time
from a hand-written descriptor, and holding a canonical string of the value:

* ``kubernetes.Quantity``: the exact value in nano-units (``api.quantity``), so that
  message equality is upstream's ``Quantity.Equal`` (``Cmp == 0``: ``1Ki == 1024``);
* ``net.IP``: ``netip.Addr.String()``; ``net.CIDR``: ``netip.Prefix.String()``
  (equality of the Go values is equality of these texts);
* ``kubernetes.URL``: the text that was parsed;
* ``kubernetes.NamedFormat``: the format's name (``api.celformat``);
* the ``authorizer`` library's ``kubernetes.authorization.*`` types, several fields
  each (``api.celauthztypes``).

The type names, ``type(x)`` and ``==`` therefore behave as upstream's. One difference:
a message's field can be read (``ip('1.2.3.4').value``) or built with a message literal,
where cel-go refuses field selection on an opaque type.

Who uses it: ``api.celquantity``, ``api.celurl`` and ``api.celnet`` (the functions) and
``api.celexpr`` (the environment takes ``POOL``). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kubeprio.api import celauthztypes

QUANTITY_NAME: Final = "kubernetes.Quantity"
URL_NAME: Final = "kubernetes.URL"
NAMED_FORMAT_NAME: Final = "kubernetes.NamedFormat"
IP_NAME: Final = "net.IP"
CIDR_NAME: Final = "net.CIDR"

VALUE_FIELD: Final = "value"


def _file(package: str, messages: tuple[str, ...]) -> descriptor_pb2.FileDescriptorProto:
    described = descriptor_pb2.FileDescriptorProto(
        name=f"kubeprio/cel/{package}.proto", package=package, syntax="proto3"
    )
    for name in messages:
        message = described.message_type.add(name=name)
        message.field.add(
            name=VALUE_FIELD,
            number=1,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    return described


def _pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file("kubernetes", ("Quantity", "URL", "NamedFormat")))
    pool.Add(_file("net", ("IP", "CIDR")))
    pool.Add(celauthztypes.file_descriptor())
    return pool


POOL: Final = _pool()
"""The descriptor pool every Kubernetes CEL environment is built with."""


def message_class(name: str) -> Any:
    """The generated class of a message type in ``POOL``."""
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(name))


_QUANTITY_CLASS: Final[Any] = message_class(QUANTITY_NAME)
_URL_CLASS: Final[Any] = message_class(URL_NAME)
_NAMED_FORMAT_CLASS: Final[Any] = message_class(NAMED_FORMAT_NAME)
_IP_CLASS: Final[Any] = message_class(IP_NAME)
_CIDR_CLASS: Final[Any] = message_class(CIDR_NAME)

QUANTITY: Final[Any] = cel.Type(QUANTITY_NAME)
URL: Final[Any] = cel.Type(URL_NAME)
NAMED_FORMAT: Final[Any] = cel.Type(NAMED_FORMAT_NAME)
IP: Final[Any] = cel.Type(IP_NAME)
CIDR: Final[Any] = cel.Type(CIDR_NAME)


def quantity_value(nanos: int) -> Any:
    """A ``kubernetes.Quantity`` holding ``nanos`` units of 10^-9."""
    return _QUANTITY_CLASS(value=str(nanos))


def url_value(text: str) -> Any:
    """A ``kubernetes.URL`` for the (already validated) ``text``."""
    return _URL_CLASS(value=text)


def named_format_value(name: str) -> Any:
    """A ``kubernetes.NamedFormat`` (``api.celformat``) for the format called ``name``
    (empty: none, the zero value that ``optional.ofNonZeroValue`` drops)."""
    return _NAMED_FORMAT_CLASS(value=name)


def ip_value(canonical: str) -> Any:
    """A ``net.IP`` holding ``netip.Addr.String()`` of the address."""
    return _IP_CLASS(value=canonical)


def cidr_value(canonical: str) -> Any:
    """A ``net.CIDR`` holding ``netip.Prefix.String()`` of the prefix."""
    return _CIDR_CLASS(value=canonical)


def carried(message: Any) -> str:
    """The string a value of one of these types carries."""
    return str(message.value)
