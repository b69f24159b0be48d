package events

// Container events: where a response's code_interpreter runs (OpenAI's containers). A container holds files: those
// a client gave it and those its code wrote; its warm sandbox lives on the node that runs its code.

// ContainerCreated opens a container with the client's files.
type ContainerCreated struct {
	Name    string   `json:"name"`
	FileIDs []string `json:"file_ids,omitempty"`
	// ResponseID names the response whose code_interpreter made it ({"type": "auto"}), "" for a client's.
	ResponseID string `json:"response_id,omitempty"`
	// ExpiresAfterMinutes is how long it lives after its last activity; 0 (logs written before it was asked) is
	// OpenAI's default, 20.
	ExpiresAfterMinutes int `json:"expires_after_minutes,omitempty"`
}

func (ContainerCreated) EventType() string { return "container.created" }

// ContainerFileAdded records a file of the container: Source "user" or "assistant" (the code wrote it), at Path.
type ContainerFileAdded struct {
	FileID string `json:"file_id"`
	Path   string `json:"path"`
	Source string `json:"source"`
	Bytes  int64  `json:"bytes"`
}

func (ContainerFileAdded) EventType() string { return "container.file_added" }

// ContainerUsed records that a code_interpreter call ran in the container (ItemID, the call's item): its last
// activity, which its expiry counts from.
type ContainerUsed struct {
	ItemID string `json:"item_id,omitempty"`
}

func (ContainerUsed) EventType() string { return "container.used" }

// ContainerFileDeleted removes a file from the container (DELETE /v1/containers/{id}/files/{file_id}): it leaves
// the container's listing and its /mnt/data, at Path. The account's file itself stays.
type ContainerFileDeleted struct {
	FileID string `json:"file_id"`
	Path   string `json:"path"`
}

func (ContainerFileDeleted) EventType() string { return "container.file_deleted" }

// ContainerDeleted deletes a container.
type ContainerDeleted struct{}

func (ContainerDeleted) EventType() string { return "container.deleted" }

func containerEvents() []Event {
	return []Event{ContainerCreated{}, ContainerFileAdded{}, ContainerUsed{}, ContainerFileDeleted{}, ContainerDeleted{}}
}
