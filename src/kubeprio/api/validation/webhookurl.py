"""Validation of where a webhook listens: its ``url`` or its ``service`` reference.

Mirrors v1.32's ``staging/src/k8s.io/apiserver/pkg/util/webhook/validation.go``
(``ValidateWebhookURL`` with https forced, ``ValidateWebhookService``) and the
``clientConfig`` switch of ``validate...Webhook`` (exactly one of the two). Who uses it:
``api.validation.webhookconfiguration``. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from kubeprio.api import errors
from kubeprio.api.errors import FieldError
from kubeprio.api.validation.meta import child, dns1123_subdomain_errors
from kubeprio.api.webhookconfiguration import WebhookClientConfig

_URL_FORM: Final = "; desired format: https://host[/path]"


def validate_webhook_url(url: str, path: str) -> list[FieldError]:
    """``ValidateWebhookURL`` with https forced."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return [errors.required(path, f"url must be a valid URL: {exc}{_URL_FORM}")]
    found: list[FieldError] = []
    if parts.scheme != "https":
        found.append(
            errors.invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + _URL_FORM)
        )
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        host = parts.netloc
    if not host:
        found.append(errors.invalid(path, host, "host must be provided" + _URL_FORM))
    if at:
        found.append(errors.invalid(path, userinfo, "user information is not permitted in the URL"))
    if parts.fragment:
        found.append(errors.invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        found.append(
            errors.invalid(path, parts.query, "query parameters are not permitted in the URL")
        )
    return found


def validate_webhook_service(
    name: str, namespace: str, url_path: str | None, port: int, path: str
) -> list[FieldError]:
    """``ValidateWebhookService``: name, namespace, port, then the path's segments."""
    found: list[FieldError] = []
    if not name:
        found.append(errors.required(child(path, "name"), "service name is required"))
    if not namespace:
        found.append(errors.required(child(path, "namespace"), "service namespace is required"))
    if not 1 <= port <= 65535:
        found.append(
            errors.invalid(
                child(path, "port"),
                port,
                "port is not valid: must be between 1 and 65535, inclusive",
            )
        )
    if url_path is None or url_path in ("", "/"):
        return found
    path_field = child(path, "path")
    if url_path == "//":
        found.append(errors.invalid(path_field, url_path, "segment[0] may not be empty"))
        return found
    if not url_path.startswith("/"):
        found.append(errors.invalid(path_field, url_path, "must start with a '/'"))
    to_check = url_path[1:]
    if to_check.endswith("/"):
        to_check = to_check[:-1]
    for position, step in enumerate(to_check.split("/")):
        if not step:
            found.append(
                errors.invalid(path_field, url_path, f"segment[{position}] may not be empty")
            )
            continue
        found.extend(
            errors.invalid(path_field, url_path, f"segment[{position}]: {message}")
            for message in dns1123_subdomain_errors(step)
        )
    return found


def validate_client_config(config: WebhookClientConfig | None, path: str) -> list[FieldError]:
    """Exactly one of ``url`` and ``service``, then that one's rules."""
    config = config or WebhookClientConfig()
    config_path = child(path, "clientConfig")
    if (config.url is None) == (config.service is None):
        return [errors.required(config_path, "exactly one of url or service is required")]
    if config.url is not None:
        return validate_webhook_url(config.url, child(config_path, "url"))
    service = config.service
    assert service is not None
    return validate_webhook_service(
        service.name or "",
        service.namespace or "",
        service.path,
        service.port if service.port is not None else 0,
        child(config_path, "service"),
    )
