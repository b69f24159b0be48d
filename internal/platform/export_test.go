package platform

// RoutingFeedStopped reports whether the routing index's feed has ended.
func (p *Platform) RoutingFeedStopped() bool {
	select {
	case <-p.feedDone:
		return true
	default:
		return false
	}
}
