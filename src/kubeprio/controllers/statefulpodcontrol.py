"""The StatefulSet controller's writes: pods, their claims, and the events about both.

Mirrors ``pkg/controller/statefulset/stateful_pod_control.go`` (v1.32, with
``StatefulSetAutoDeletePVC`` on, as it is by default):

* ``create_pod`` (``CreateStatefulPod``): first each missing claim of the pod
  (``createPersistentVolumeClaims``: a claim the claim informer does not hold is created,
  ``SuccessfulCreate`` "create Claim data-web-0 Pod web-0 in StatefulSet web success" or
  ``FailedCreate`` "create Claim data-web-0 for Pod web-0 in StatefulSet web failed error:
  ..."; an AlreadyExists is an error without an event; a claim that exists but is being
  deleted is the error "pvc data-web-0 is being deleted"), and on any claim error the pod
  is not created (``FailedCreate`` "create Pod web-0 in StatefulSet web failed error:
  ..."); then the pod, then the claims' owner references per the retention policy;
* ``create_missing_claims`` (``createMissingPersistentVolumeClaims``), for a Pending pod
  whose claims went away;
* ``update_pod`` (``UpdateStatefulPod``): identity, volumes and the claims' owner
  references put right, with ``retry.RetryOnConflict(retry.DefaultBackoff)``: at most
  4 attempts, one ``SuccessfulUpdate``/``FailedUpdate`` event once an update was tried;
* ``delete_pod`` (``DeleteStatefulPod``; the claims stay);
* ``claims_match_policy``, ``fix_claims`` (``ClaimsMatchRetentionPolicy``,
  ``UpdatePodClaimForRetentionPolicy``, with its ``ConflictingController`` warning) and
  ``claim_is_stale`` (``PodClaimIsStale``: under ``whenScaled: Delete`` a claim still owned
  by an earlier pod of the same name holds the new pod back until the garbage collector
  has removed it).

Claims are read through the claim informer (upstream's lister). A conflicting pod update
re-reads the pod from the API rather than the pod informer, as upstream's lister would:
kubeprio pumps informers between reconciles, so the cache would hand back the same stale
pod for every retry. Errors are raised; the caller requeues.
"""

from __future__ import annotations

import contextlib
from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.statefulset import StatefulSet
from kubeprio.client import record
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import Client
from kubeprio.controllers import statefulsetclaims as claims
from kubeprio.controllers import statefulsetutil as util
from kubeprio.errors import ControllerError, KubeprioError

UPDATE_POD_ATTEMPTS: Final = 4
"""``retry.DefaultBackoff.Steps``: ``UpdateStatefulPod``'s conflict retries."""


class ClaimError(ControllerError):
    """The claims of a pod could not be made (``errorutils.NewAggregate`` of the causes)."""


def _aggregate(messages: list[str]) -> ClaimError | None:
    """``NewAggregate(errs).Error()``: one message alone, several as ``[a, b]``."""
    if not messages:
        return None
    unique = list(dict.fromkeys(messages))
    return ClaimError(unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]")


class StatefulPodControl:
    """``StatefulPodControl`` with the real object manager: a client and the claim informer."""

    def __init__(
        self,
        client: Client,
        recorder: record.EventRecorder,
        claim_informer: Informer[PersistentVolumeClaim],
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.claims = claim_informer

    # --- events --------------------------------------------------------------------------------

    def pod_event(self, sts: StatefulSet, verb: str, pod: Pod, failure: Exception | None) -> None:
        """``recordPodEvent``."""
        name, set_name = pod.metadata.name, sts.metadata.name
        if failure is None:
            self.recorder.event(
                sts,
                record.EVENT_TYPE_NORMAL,
                f"Successful{verb.title()}",
                f"{verb} Pod {name} in StatefulSet {set_name} successful",
            )
        else:
            self.recorder.event(
                sts,
                record.EVENT_TYPE_WARNING,
                f"Failed{verb.title()}",
                f"{verb} Pod {name} in StatefulSet {set_name} failed error: {failure}",
            )

    def _claim_event(
        self,
        sts: StatefulSet,
        verb: str,
        pod: Pod,
        claim: PersistentVolumeClaim,
        failure: Exception | None,
    ) -> None:
        """``recordClaimEvent`` (the success text has no "for")."""
        claim_name, pod_name, set_name = claim.metadata.name, pod.metadata.name, sts.metadata.name
        if failure is None:
            self.recorder.event(
                sts,
                record.EVENT_TYPE_NORMAL,
                f"Successful{verb.title()}",
                f"{verb} Claim {claim_name} Pod {pod_name} in StatefulSet {set_name} success",
            )
        else:
            self.recorder.event(
                sts,
                record.EVENT_TYPE_WARNING,
                f"Failed{verb.title()}",
                f"{verb} Claim {claim_name} for Pod {pod_name} in StatefulSet {set_name} "
                f"failed error: {failure}",
            )

    # --- claims --------------------------------------------------------------------------------

    def _get_claim(self, namespace: str | None, name: str) -> PersistentVolumeClaim | None:
        return self.claims.get(name, namespace)

    def create_claims(self, sts: StatefulSet, pod: Pod) -> None:
        """``createPersistentVolumeClaims``: every missing claim of ``pod``; raises the
        aggregate of what went wrong (the others are still tried)."""
        problems: list[str] = []
        for claim in claims.claims_for(sts, pod):
            name = claim.metadata.name or ""
            existing = self._get_claim(claim.metadata.namespace, name)
            if existing is not None:
                if existing.metadata.deletion_timestamp:
                    problems.append(f"pvc {name} is being deleted")
                continue
            try:
                self.client.create(claim)
            except errors.StatusError as exc:
                problems.append(f"failed to create PVC {name}: {exc}")
                if not isinstance(exc, errors.AlreadyExistsError):
                    self._claim_event(sts, "create", pod, claim, exc)
                continue
            self._claim_event(sts, "create", pod, claim, None)
        failure = _aggregate(problems)
        if failure is not None:
            raise failure

    def create_missing_claims(self, sts: StatefulSet, pod: Pod) -> None:
        """``createMissingPersistentVolumeClaims``: for a Pending pod."""
        self.create_claims(sts, pod)
        try:
            self.fix_claims(sts, pod)
        except KubeprioError as exc:
            self.pod_event(sts, "update", pod, exc)
            raise

    def claims_match_policy(self, sts: StatefulSet, pod: Pod) -> bool:
        """``ClaimsMatchRetentionPolicy``: a missing claim is left for the next pass."""
        for name in claims.claim_names(sts, util.ordinal_of(pod)):
            claim = self._get_claim(sts.metadata.namespace, name)
            if claim is not None and not claims.is_claim_owner_up_to_date(claim, sts, pod):
                return False
        return True

    def fix_claims(self, sts: StatefulSet, pod: Pod) -> None:
        """``UpdatePodClaimForRetentionPolicy``: set each claim's owner references."""
        for name in claims.claim_names(sts, util.ordinal_of(pod)):
            claim = self._get_claim(sts.metadata.namespace, name)
            if claim is None:
                continue
            if claims.has_unexpected_controller(claim, sts, pod):
                self.recorder.event(
                    sts,
                    record.EVENT_TYPE_WARNING,
                    "ConflictingController",
                    f"PersistentVolumeClaim {name} has a conflicting OwnerReference that "
                    "acts as a manging controller, the retention policy is ignored for "
                    "this claim",
                )
            if claims.is_claim_owner_up_to_date(claim, sts, pod):
                continue
            try:
                self.client.update(claims.with_policy_owner_refs(claim, sts, pod))
            except errors.StatusError as exc:
                raise ClaimError(
                    f"could not update claim {name} for delete policy ownerRefs: {exc}"
                ) from exc

    def claim_is_stale(self, sts: StatefulSet, pod: Pod) -> bool:
        """``PodClaimIsStale``: under ``whenScaled: Delete``, a claim an earlier pod of
        this name still owns."""
        if claims.retention_policy(sts)[1] == claims.RETAIN:
            return False
        for claim in claims.claims_for(sts, pod):
            existing = self._get_claim(claim.metadata.namespace, claim.metadata.name or "")
            if existing is not None and claims.pod_ref_is_stale(existing, pod):
                return True
        return False

    # --- pods ----------------------------------------------------------------------------------

    def create_pod(self, sts: StatefulSet, pod: Pod) -> None:
        """``CreateStatefulPod`` (an AlreadyExists is raised without an event)."""
        try:
            self.create_claims(sts, pod)
        except ClaimError as exc:
            self.pod_event(sts, "create", pod, exc)
            raise
        try:
            self.client.create(pod)
        except errors.AlreadyExistsError:
            raise
        except errors.StatusError as exc:
            self.pod_event(sts, "create", pod, exc)
            raise
        # Upstream passes the pod it sent (no UID yet): only the set's reference can be
        # added now; a pod reference comes when the pod is condemned.
        try:
            self.fix_claims(sts, pod)
        except KubeprioError as exc:
            self.pod_event(sts, "update", pod, exc)
            raise
        self.pod_event(sts, "create", pod, None)

    def delete_pod(self, sts: StatefulSet, pod: Pod) -> None:
        """``DeleteStatefulPod``: a graceful delete, with its event either way."""
        try:
            self.client.delete(Pod, pod.metadata.name or "", pod.metadata.namespace)
        except errors.StatusError as exc:
            self.pod_event(sts, "delete", pod, exc)
            raise
        self.pod_event(sts, "delete", pod, None)

    def update_pod(self, sts: StatefulSet, pod: Pod) -> None:
        """``UpdateStatefulPod``: identity, volumes and claim owners, retried on conflict."""
        attempted = False
        failure: KubeprioError | None = None
        for _ in range(UPDATE_POD_ATTEMPTS):
            failure = None
            consistent = True
            if not util.identity_matches(sts, pod) or not util.storage_matches(sts, pod):
                storage_ok = util.storage_matches(sts, pod)
                pod = util.update_identity(sts, pod)
                consistent = False
                if not storage_ok:
                    try:
                        self.create_claims(sts, pod)
                    except ClaimError as exc:
                        self.pod_event(sts, "update", pod, exc)
                        raise
            if not self.claims_match_policy(sts, pod):
                try:
                    self.fix_claims(sts, pod)
                except KubeprioError as exc:
                    self.pod_event(sts, "update", pod, exc)
                    raise
                consistent = False
            if consistent:
                break
            attempted = True
            try:
                self.client.update(pod)
                break
            except errors.StatusError as exc:
                failure = exc
                with contextlib.suppress(errors.StatusError):
                    pod = self.client.get(Pod, pod.metadata.name or "", pod.metadata.namespace)
                if not isinstance(exc, errors.ConflictError):
                    break
        if attempted:
            self.pod_event(sts, "update", pod, failure)
        if failure is not None:
            raise failure
