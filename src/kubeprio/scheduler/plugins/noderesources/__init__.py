"""Node resource plugins (upstream ``pkg/scheduler/framework/plugins/noderesources``).

* ``fit``: NodeResourcesFit, the resource filter and the allocation score
  (LeastAllocated, MostAllocated, RequestedToCapacityRatio);
* ``balanced_allocation``: NodeResourcesBalancedAllocation;
* ``resource_allocation`` and ``strategies``: the scorer both share;
* ``args``: their configuration (``NodeResourcesFitArgs``,
  ``NodeResourcesBalancedAllocationArgs``) and its validation.
"""
