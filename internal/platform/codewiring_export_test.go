package platform

// StopHearingContainerDeletions ends this node's subscription to containers' deletions, as a node that missed them
// (a lost connection, say): from then on only the sweep closes a deleted container's sandbox. The subscription is
// made with the node's first code sandbox.
func (p *Platform) StopHearingContainerDeletions() bool {
	p.code.mu.Lock()
	sub := p.code.deletions
	p.code.mu.Unlock()
	return sub != nil && sub.Unsubscribe() == nil
}
