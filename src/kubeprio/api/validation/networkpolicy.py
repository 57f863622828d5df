"""NetworkPolicy validation (networking.k8s.io/v1).

Mirrors upstream v1.32 ``pkg/apis/networking/validation/validation.go``:

* ``ValidateNetworkPolicySpec``: ``podSelector`` and every peer selector are label
  selectors; each ingress/egress port has a known protocol (TCP, UDP, SCTP), a valid
  number or IANA name, and an ``endPort`` only after a numeric ``port`` and not below it;
  each peer names at least one of podSelector, namespaceSelector, ipBlock, and an
  ``ipBlock`` stands alone; ``policyTypes`` at most two, each Ingress or Egress.
* ``ValidateIPBlock``: ``cidr`` required and a CIDR as v1.32's ``IsValidCIDR`` reads it
  (``ParseCIDRSloppy``: host bits and leading zeros allowed), each ``except`` a CIDR
  strictly inside it.
* ``ValidateNetworkPolicyUpdate``: the spec rules again; a stored policy whose pod
  selector has invalid label values may keep them (``ValidationOptionsForNetworking``).

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.gotext import go_quote
from kubeprio.api.networkpolicy import (
    POLICY_TYPES,
    PROTOCOLS,
    IPBlock,
    NetworkPolicy,
    NetworkPolicyPeer,
    NetworkPolicyPort,
    NetworkPolicySpec,
)
from kubeprio.api.validation.ip import cidr_errors, parse_cidr_sloppy
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    child,
    index,
    validate_label_selector,
)
from kubeprio.api.validation.podspec import port_name_errors, port_number_errors


def validate_port(port: NetworkPolicyPort, path: str) -> list[FieldError]:
    """``ValidateNetworkPolicyPort``."""
    found: list[FieldError] = []
    if port.protocol is not None and port.protocol not in PROTOCOLS:
        found.append(errors.not_supported(child(path, "protocol"), port.protocol, PROTOCOLS))
    end_path = child(path, "endPort")
    if port.port is None:
        if port.end_port is not None:
            found.append(
                errors.invalid(
                    end_path, port.end_port, "may not be specified when `port` is not specified"
                )
            )
    elif isinstance(port.port, int):
        found.extend(
            errors.invalid(child(path, "port"), port.port, message)
            for message in port_number_errors(port.port)
        )
        if port.end_port is not None:
            if port.end_port < port.port:
                found.append(
                    errors.invalid(
                        end_path, port.end_port, "must be greater than or equal to `port`"
                    )
                )
            found.extend(
                errors.invalid(end_path, port.end_port, message)
                for message in port_number_errors(port.end_port)
            )
    else:
        if port.end_port is not None:
            found.append(
                errors.invalid(
                    end_path, port.end_port, "may not be specified when `port` is non-numeric"
                )
            )
        found.extend(
            errors.invalid(child(path, "port"), port.port, message)
            for message in port_name_errors(port.port)
        )
    return found


def validate_ip_block(block: IPBlock, path: str) -> list[FieldError]:
    """``ValidateIPBlock``: the CIDR, and each exception strictly inside it."""
    cidr = block.cidr or ""
    if not cidr:
        return [errors.required(child(path, "cidr"))]
    found = cidr_errors(cidr, child(path, "cidr"))
    network = parse_cidr_sloppy(cidr)
    if network is None:
        return found
    for position, exception in enumerate(block.except_ or ()):
        except_path = index(child(path, "except"), position)
        found.extend(cidr_errors(exception, except_path))
        inner = parse_cidr_sloppy(exception)
        if inner is None:
            continue
        # Go's IPNet.Contains on the exception's network number (false across families),
        # and IPMask.Size's prefix lengths: the exception's must be strictly longer.
        if not network.contains(inner.network) or network.prefix >= inner.prefix:
            found.append(
                errors.invalid(except_path, exception, "must be a strict subset of `cidr`")
            )
    return found


def validate_peer(
    peer: NetworkPolicyPeer, path: str, *, allow_invalid_label_value: bool
) -> list[FieldError]:
    """``ValidateNetworkPolicyPeer``: at least one kind of peer; an ipBlock alone."""
    found: list[FieldError] = []
    count = 0
    for name, selector in (
        ("podSelector", peer.pod_selector),
        ("namespaceSelector", peer.namespace_selector),
    ):
        if selector is not None:
            count += 1
            found.extend(
                validate_label_selector(
                    selector, child(path, name), allow_invalid_label_value=allow_invalid_label_value
                )
            )
    if peer.ip_block is not None:
        count += 1
        found.extend(validate_ip_block(peer.ip_block, child(path, "ipBlock")))
    if count == 0:
        found.append(errors.required(path, "must specify a peer"))
    elif count > 1 and peer.ip_block is not None:
        found.append(errors.forbidden(path, "may not specify both ipBlock and another peer"))
    return found


def validate_spec(
    spec: NetworkPolicySpec, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """``ValidateNetworkPolicySpec``."""
    found = validate_label_selector(
        spec.pod_selector, "spec.podSelector", allow_invalid_label_value=allow_invalid_label_value
    )
    directions = (
        ("ingress", "from", [(rule.ports, rule.from_) for rule in spec.ingress or ()]),
        ("egress", "to", [(rule.ports, rule.to) for rule in spec.egress or ()]),
    )
    for direction, peers_name, rules in directions:
        for rule_index, (ports, peers) in enumerate(rules):
            rule_path = index(child("spec", direction), rule_index)
            for position, port in enumerate(ports or ()):
                found.extend(validate_port(port, index(child(rule_path, "ports"), position)))
            for position, peer in enumerate(peers or ()):
                found.extend(
                    validate_peer(
                        peer,
                        index(child(rule_path, peers_name), position),
                        allow_invalid_label_value=allow_invalid_label_value,
                    )
                )
    types = spec.policy_types or ()
    if len(types) > len(POLICY_TYPES):
        # A pointer to the slice: v1.32's ErrorBody prints the slice with %#v.
        shown = GoValue("[]networking.PolicyType{" + ", ".join(go_quote(t) for t in types) + "}")
        found.append(
            errors.invalid("spec.policyTypes", shown, "may not specify more than two policyTypes")
        )
        return found
    found.extend(
        errors.not_supported(index("spec.policyTypes", position), policy_type, POLICY_TYPES)
        for position, policy_type in enumerate(types)
        if policy_type not in POLICY_TYPES
    )
    return found


def validate_network_policy(policy: NetworkPolicy) -> list[FieldError]:
    """``ValidateNetworkPolicy`` beyond metadata."""
    return validate_spec(policy.spec or NetworkPolicySpec())


def validate_network_policy_update(new: NetworkPolicy, old: NetworkPolicy) -> list[FieldError]:
    """``ValidateNetworkPolicyUpdate`` beyond metadata, with ``ValidationOptionsForNetworking``:
    invalid label values stay allowed when the stored pod selector already has them."""
    old_selector = old.spec.pod_selector if old.spec is not None else None
    allow = bool(validate_label_selector(old_selector, "spec.podSelector"))
    return validate_spec(new.spec or NetworkPolicySpec(), allow_invalid_label_value=allow)


CREATE: Final[dict[type[Any], KindValidator]] = {NetworkPolicy: validate_network_policy}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    NetworkPolicy: validate_network_policy_update
}
