package controller

// ReplicaCounter counts the controller's replicas serving traffic;
// *replicas.Counter implements it.
type ReplicaCounter interface {
	Count() int
	Changed() <-chan struct{}
}

// replicas is the count for the build; 0 without a counter.
func (c *Controller) replicas() int {
	if c.opts.Replicas == nil {
		return 0
	}
	return c.opts.Replicas.Count()
}

// replicasChanged receives when the count changed; nil (never) without a
// counter.
func (c *Controller) replicasChanged() <-chan struct{} {
	if c.opts.Replicas == nil {
		return nil
	}
	return c.opts.Replicas.Changed()
}
