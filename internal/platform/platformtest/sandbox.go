package platformtest

// WarmSandbox says whether the node holds a warm code sandbox for session (a container's ID).
func (n *Node) WarmSandbox(session string) bool {
	held, _ := n.warm(session)
	return held
}

// CallInSandbox says whether a call runs now in the node's warm code sandbox for session.
func (n *Node) CallInSandbox(session string) bool {
	_, inCall := n.warm(session)
	return inCall
}

func (n *Node) warm(session string) (held, inCall bool) {
	for _, w := range n.WarmCodeSandboxes() {
		if w.Key == session {
			return true, w.InCall
		}
	}
	return false, false
}

// SandboxClosed counts the node's log lines saying it closed session's warm sandbox for why (as the log says it:
// "its container was deleted", "its container expired"); a test checks a close is done, and said, once.
func (n *Node) SandboxClosed(session, why string) int {
	return n.Logs.Count(`"msg":"closed a warm code sandbox"`, `"session":"`+session+`"`, `"why":"`+why+`"`)
}
