"""``RestSubresources``: the subresources of the REST handler with bodies of their own kind.

* ``pods/binding`` and ``pods/eviction``: 201 with a success Status (upstream
  ``BindingREST.Create``, ``EvictionREST.Create``; 429 when a PodDisruptionBudget
  forbids the eviction);
* ``serviceaccounts/token``: 201 with the TokenRequest carrying its token
  (``apiserver.tokenrequest``), installed only with a token issuer;
* ``<kind>/scale``: GET, PUT and PATCH of an autoscaling/v1 ``Scale``; the workload's
  ``spec.replicas`` changes through its update path (``apiserver.scale``).

Who drives it: ``RestHandler`` (``apiserver.rest``) is built on it and dispatches here.
"""

from __future__ import annotations

import dataclasses

from kubeprio.api.apps import Scale
from kubeprio.api.core import Binding
from kubeprio.api.policy import Eviction
from kubeprio.api.reviews import AUTHENTICATION_V1
from kubeprio.api.serialization import to_dict
from kubeprio.api.tokenrequest import TokenRequest, default_token_request
from kubeprio.apiserver import status, tokenrequest
from kubeprio.apiserver.negotiation import dry_run
from kubeprio.apiserver.restdecoding import (
    read_object,
    read_subresource,
)
from kubeprio.apiserver.restmessages import Reply, RestRequest
from kubeprio.apiserver.restwrites import RestWrites
from kubeprio.apiserver.scale import patched_scale
from kubeprio.apiserver.service import ApiService
from kubeprio.clock import Clock


class RestSubresources(RestWrites):
    """Binding, eviction, token and scale over an ``ApiService``."""

    service: ApiService
    clock: Clock
    token_issuer: tokenrequest.TokenIssuer | None

    def bind(self, request: RestRequest) -> Reply:
        """``pods/binding``: 201 with a success Status (upstream ``BindingREST.Create``)."""
        binding, warnings = read_subresource(request, Binding)
        self.service.bind_object(binding, user=request.user)
        return Reply(201, status.success_status(201), tuple(warnings))

    def bind_legacy(self, request: RestRequest) -> Reply:
        """POST ``namespaces/<ns>/bindings``: ``pods/binding`` for the pod the body names
        (upstream ``LegacyBindingREST.Create`` passes the body's name as the URL's)."""
        binding, warnings = read_subresource(request, Binding, name_from_body=True)
        self.service.bind_object(binding, user=request.user)
        return Reply(201, status.success_status(201), tuple(warnings))

    def evict(self, request: RestRequest) -> Reply:
        """``pods/eviction``: 201 with a success Status, 429 when a PDB forbids it."""
        eviction, warnings = read_subresource(request, Eviction)
        self.service.evict(eviction, user=request.user)
        return Reply(201, status.success_status(201), tuple(warnings))

    def create_token(self, request: RestRequest) -> Reply:
        """``serviceaccounts/token``: 201 with the TokenRequest carrying its token."""
        if self.token_issuer is None:
            # Upstream installs the subresource only when it has a token issuer.
            raise status.path_not_found()
        token_request, warnings = read_object(
            request, TokenRequest, expect_name=False, api_version=AUTHENTICATION_V1
        )
        target = request.target
        issued = tokenrequest.create_token(
            self.service,
            self.token_issuer,
            namespace=target.namespace or "",
            name=target.name,
            request=default_token_request(token_request),
            now=self.clock.now(),
        )
        return Reply(201, issued.body, (*warnings, *issued.warnings))

    def get_scale(self, request: RestRequest) -> Reply:
        """GET ``deployments/<name>/scale``: an autoscaling/v1 ``Scale``."""
        target = request.target
        return Reply(
            200, to_dict(self.service.get_scale(target.info.model, target.name, target.namespace))
        )

    def write_scale(self, request: RestRequest) -> Reply:
        """PUT or PATCH the ``scale`` subresource; the workload's ``spec.replicas`` changes."""
        target = request.target
        info = target.info
        if request.method == "PUT":
            new_scale, warnings = read_object(
                request, Scale, expect_name=True, api_version="autoscaling/v1"
            )
        else:
            current = self.service.get_scale(info.model, target.name, target.namespace)
            new_scale, warnings = patched_scale(request, current)
        new_scale = dataclasses.replace(
            new_scale,
            metadata=dataclasses.replace(
                new_scale.metadata, name=target.name, namespace=target.namespace
            ),
        )
        result = self.service.update_scale_object(
            info.model,
            new_scale,
            user=request.user,
            dry_run=dry_run(request.query),
            uid_is_precondition=request.method == "PUT",
        )
        return Reply(200, to_dict(result.obj), (*warnings, *result.warnings))
