package events

// allEvents lists every event type, one group per aggregate file. A new aggregate adds its group here.
func allEvents() [][]Event {
	return [][]Event{
		accountEvents(),
		assistantEvents(), threadEvents(), runEvents(), fileEvents(), vectorStoreEvents(),
		agentEvents(), sessionEvents(), embedEvents(),
		julepEvents(), taskEvents(),
		responseEvents(), conversationEvents(), containerEvents(),
	}
}
