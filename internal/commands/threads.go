package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
)

// The thread aggregate's state and its turn decisions are domain/thread's.
type (
	Thread        = thread.State
	ThreadMessage = thread.Message
	ThreadRun     = thread.Run
	ThreadStep    = thread.Step
	Attachment    = thread.Attachment
	TurnResult    = thread.TurnResult
)

// Threads are the commands on threads and their messages.
type Threads struct {
	store *eventstore.Store
	files *Files
	// repo keeps threads folded on this node: a run's creation, the worker's turns and its checks decide on the
	// thread as held, not on its history folded again (a thread with a long conversation has hundreds of events).
	repo *eventstore.Repo[thread.State, *thread.State]
}

// NewMessage is a message a client adds to a thread.
type NewMessage struct {
	Role        string
	Content     []events.ContentPart
	Attachments json.RawMessage
	Metadata    map[string]string
}

// NewThread is a thread a client creates, with its first messages.
type NewThread struct {
	// ID fixes the thread's ID (a streaming face subscribes to the thread before creating it); "" = a fresh one.
	ID            string
	Metadata      map[string]string
	ToolResources json.RawMessage
	// ToolResourcesField is the request field ToolResources came from, for errors ("": tool_resources).
	ToolResourcesField string
	Messages           []NewMessage
}

func validateMessage(field string, m NewMessage) error {
	at := func(name string) string {
		if field == "" {
			return name
		}
		return field + "." + name
	}
	switch m.Role {
	case "user", "assistant":
	case "":
		return errs.Missing(at("role"))
	default:
		return errs.InvalidField(at("role"), "invalid value: '%s'. Supported values are: 'user' and 'assistant'", m.Role)
	}
	if err := validateContent(at("content"), m.Content); err != nil {
		return err
	}
	if _, err := ParseAttachments(at("attachments"), m.Attachments); err != nil {
		return err
	}
	return ValidateMetadata(at("metadata"), m.Metadata)
}

// maxAttachments bounds a message's attachments.
const maxAttachments = 20

// ParseAttachments reads and checks a message's attachments (nil or empty: none).
func ParseAttachments(field string, raw json.RawMessage) ([]Attachment, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if err := checkJSON(field, raw); err != nil {
		return nil, err
	}
	var out []Attachment
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, errs.InvalidField(field, "attachments must be an array of {file_id, tools: [{type}]}")
	}
	if err := checkCount(field, len(out), maxAttachments); err != nil {
		return nil, err
	}
	for i, a := range out {
		at := fmt.Sprintf("%s[%d]", field, i)
		if err := ids.Check(at+".file_id", ids.File, a.FileID); err != nil {
			return nil, err
		}
		for j, t := range a.Tools {
			if t.Type != "file_search" && t.Type != "code_interpreter" {
				return nil, errs.InvalidField(fmt.Sprintf("%s.tools[%d].type", at, j), "invalid value: '%s'. Supported values are: 'code_interpreter' and 'file_search'", clipID(t.Type))
			}
		}
	}
	return out, nil
}

// checkToolResources checks the files and vector stores a new thread's tool_resources names.
func (c *Threads) checkToolResources(ctx context.Context, actor auth.Principal, in NewThread) error {
	field := in.ToolResourcesField
	if field == "" {
		field = "tool_resources"
	}
	return checkToolResources(ctx, c.store, actor, field, in.ToolResources)
}

// CheckAttachedFiles checks that the files messages attach, and the image files their content shows, are the
// caller's, and that each image file is an image a model can be shown (Files.CheckImage); field is where the
// messages sit in the request ("messages", "" for one message).
func (c *Threads) CheckAttachedFiles(ctx context.Context, actor auth.Principal, field string, msgs []NewMessage) error {
	return c.checkAttachedFiles(ctx, actor, field, msgs)
}

// checkAttachedFiles is CheckAttachedFiles.
func (c *Threads) checkAttachedFiles(ctx context.Context, actor auth.Principal, field string, msgs []NewMessage) error {
	for i, m := range msgs {
		at := func(name string) string {
			if field == "" {
				return name
			}
			return fmt.Sprintf("%s[%d].%s", field, i, name)
		}
		atts, err := ParseAttachments("", m.Attachments)
		if err != nil {
			return err
		}
		for j, a := range atts {
			if err := ownedFile(ctx, c.store, actor, at(fmt.Sprintf("attachments[%d].file_id", j)), a.FileID); err != nil {
				return err
			}
		}
		for j, p := range m.Content {
			if p.Type != "image_file" || p.ImageFile == nil {
				continue
			}
			// The caller's, and one the model can be shown (an image by its bytes, within the bound), so that a
			// refusal names the part now rather than the run's model reading a note later.
			if err := c.files.CheckImage(ctx, actor.AccountID, at(fmt.Sprintf("content[%d].image_file.file_id", j)), p.ImageFile.FileID); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateContent checks a message's content parts: text within the message's limit (all parts together), images
// by a file of this server, an http(s) URL or a data URL of an image (CheckImageURL).
func validateContent(field string, parts []events.ContentPart) error {
	if len(parts) == 0 {
		return errs.Missing(field)
	}
	if err := checkCount(field, len(parts), maxContentParts); err != nil {
		return err
	}
	chars := 0
	for i, p := range parts {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch p.Type {
		case "text":
			chars += utf8.RuneCountInString(p.Text)
		case "image_file":
			if p.ImageFile == nil {
				return errs.Missing(at + ".image_file")
			}
			if err := ids.Check(at+".image_file.file_id", ids.File, p.ImageFile.FileID); err != nil {
				return err
			}
			if err := checkDetail(at+".image_file.detail", p.ImageFile.Detail); err != nil {
				return err
			}
		case "image_url":
			if p.ImageURL == nil {
				return errs.Missing(at + ".image_url")
			}
			if err := CheckImageURL(at+".image_url.url", p.ImageURL.URL); err != nil {
				return err
			}
			if err := checkDetail(at+".image_url.detail", p.ImageURL.Detail); err != nil {
				return err
			}
		case "":
			return errs.Missing(at + ".type")
		default:
			return errs.InvalidField(at+".type", "invalid value. Supported values are: 'text', 'image_file' and 'image_url'")
		}
	}
	if chars > maxContentChars {
		return errs.InvalidField(field, "string too long. Expected a string with maximum length %d, but got a string with length %d instead", maxContentChars, chars)
	}
	return nil
}

// checkDetail accepts an image's detail as OpenAI defines it ("" = not given).
func checkDetail(field, v string) error {
	switch v {
	case "", "auto", "low", "high":
		return nil
	}
	return errs.InvalidField(field, "invalid value. Supported values are: 'auto', 'low', and 'high'")
}

func validateThread(in NewThread) error {
	if err := ValidateMetadata("metadata", in.Metadata); err != nil {
		return err
	}
	if err := checkJSON("tool_resources", in.ToolResources); err != nil {
		return err
	}
	if err := checkCount("messages", len(in.Messages), maxMessages); err != nil {
		return err
	}
	for i, m := range in.Messages {
		if err := validateMessage("messages["+strconv.Itoa(i)+"]", m); err != nil {
			return err
		}
	}
	return nil
}

// messageEvents turns new messages into their events, with fresh IDs.
func messageEvents(msgs []NewMessage) []events.Event {
	out := make([]events.Event, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, events.MessageCreated{MessageID: events.NewPrefixedID("msg_"), Role: m.Role, Content: m.Content,
			Attachments: m.Attachments, Metadata: m.Metadata, Status: events.MessageStatusCompleted})
	}
	return out
}

// Create creates a thread with its first messages and returns its ID.
func (c *Threads) Create(ctx context.Context, actor auth.Principal, in NewThread) (string, eventstore.Appended, error) {
	if err := validateThread(in); err != nil {
		return "", eventstore.Appended{}, err
	}
	if err := c.checkAttachedFiles(ctx, actor, "messages", in.Messages); err != nil {
		return "", eventstore.Appended{}, err
	}
	if err := c.checkToolResources(ctx, actor, in); err != nil {
		return "", eventstore.Appended{}, err
	}
	id := in.ID
	if id == "" {
		id = events.NewPrefixedID("thread_")
	}
	res, err := c.repo.Update(ctx, id, eventstore.Fresh, actor.Meta(), func(t *Thread) ([]events.Event, error) {
		if t.Exists {
			return nil, errs.E(errs.Conflict, "thread %s exists", id)
		}
		evs := []events.Event{events.ThreadCreated{Metadata: in.Metadata, ToolResources: in.ToolResources}}
		return append(evs, messageEvents(in.Messages)...), nil
	})
	if err != nil {
		return "", eventstore.Appended{}, err
	}
	return id, res, nil
}

// Modify replaces a thread's metadata and, when given, its tool resources.
func (c *Threads) Modify(ctx context.Context, actor auth.Principal, id string, metadata map[string]string, setMetadata bool, toolResources json.RawMessage) (eventstore.Appended, error) {
	if err := ValidateMetadata("metadata", metadata); err != nil {
		return eventstore.Appended{}, err
	}
	if err := checkJSON("tool_resources", toolResources); err != nil {
		return eventstore.Appended{}, err
	}
	if err := checkToolResources(ctx, c.store, actor, "tool_resources", toolResources); err != nil {
		return eventstore.Appended{}, err
	}
	res, err := c.updateThread(ctx, actor, id, func(t *Thread) ([]events.Event, error) {
		m, tr := t.Metadata, t.ToolResources
		if setMetadata {
			m = metadata
		}
		if len(toolResources) > 0 {
			tr = toolResources
		}
		return []events.Event{events.ThreadModified{Metadata: m, ToolResources: tr}}, nil
	})
	return res, err
}

// Delete deletes a thread. A run still active is cancelled first, so that nothing works on a deleted thread.
func (c *Threads) Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error) {
	res, err := c.updateThread(ctx, actor, id, func(t *Thread) ([]events.Event, error) {
		var evs []events.Event
		if r := t.Runs[t.ActiveRun]; r != nil {
			evs = append(evs, thread.End(t, r, events.StepStatusCancelled, "", "")...)
		}
		return append(evs, events.ThreadDeleted{}), nil
	})
	return res, err
}

// CreateMessage adds a message to a thread and returns its ID. A thread with an active run takes none, as OpenAI
// answers.
func (c *Threads) CreateMessage(ctx context.Context, actor auth.Principal, threadID string, in NewMessage) (string, eventstore.Appended, error) {
	if err := validateMessage("", in); err != nil {
		return "", eventstore.Appended{}, err
	}
	if err := c.checkAttachedFiles(ctx, actor, "", []NewMessage{in}); err != nil {
		return "", eventstore.Appended{}, err
	}
	var id string
	res, err := c.updateThread(ctx, actor, threadID, func(t *Thread) ([]events.Event, error) {
		if t.ActiveRun != "" {
			return nil, errs.E(errs.Invalid, "Can't add messages to %s while a run %s is active.", threadID, t.ActiveRun)
		}
		evs := messageEvents([]NewMessage{in})
		id = evs[0].(events.MessageCreated).MessageID
		return evs, nil
	})
	if err != nil {
		return "", eventstore.Appended{}, err
	}
	return id, res, nil
}

// ModifyMessage replaces a message's metadata.
func (c *Threads) ModifyMessage(ctx context.Context, actor auth.Principal, threadID, messageID string, metadata map[string]string) (eventstore.Appended, error) {
	if err := ValidateMetadata("metadata", metadata); err != nil {
		return eventstore.Appended{}, err
	}
	res, err := c.updateThread(ctx, actor, threadID, func(t *Thread) ([]events.Event, error) {
		if m := t.Messages[messageID]; m == nil || m.Deleted {
			return nil, errs.NotFoundf("message", messageID)
		}
		return []events.Event{events.MessageModified{MessageID: messageID, Metadata: maps.Clone(metadata)}}, nil
	})
	return res, err
}

// DeleteMessage removes a message from a thread.
func (c *Threads) DeleteMessage(ctx context.Context, actor auth.Principal, threadID, messageID string) (eventstore.Appended, error) {
	res, err := c.updateThread(ctx, actor, threadID, func(t *Thread) ([]events.Event, error) {
		if m := t.Messages[messageID]; m == nil || m.Deleted {
			return nil, errs.NotFoundf("message", messageID)
		}
		return []events.Event{events.MessageDeleted{MessageID: messageID}}, nil
	})
	return res, err
}

func threadRef(id string) events.Ref { return events.Ref{Type: "thread", ID: id} }

// updateThread runs decide on a thread the actor may see; any other thread is not found.
func (c *Threads) updateThread(ctx context.Context, actor auth.Principal, id string, decide func(*Thread) ([]events.Event, error)) (eventstore.Appended, error) {
	if !validID(id) {
		return eventstore.Appended{}, errs.NotFoundf("thread", id)
	}
	return c.repo.Update(ctx, id, eventstore.Fresh, actor.Meta(), func(t *Thread) ([]events.Event, error) {
		if !t.Owned(actor.AccountID) {
			return nil, errs.NotFoundf("thread", id)
		}
		return decide(t)
	})
}

// Load returns a copy of the thread as the log holds it now (the run worker's view of it, which it goes on to
// change as it appends).
func (c *Threads) Load(ctx context.Context, id string) (*Thread, error) {
	return c.LoadAt(ctx, id, eventstore.Fresh)
}

// LoadAt is Load as of at least stream sequence atLeast: a thread this node holds as of it is not asked of the log.
func (c *Threads) LoadAt(ctx context.Context, id string, atLeast uint64) (*Thread, error) {
	if !validID(id) {
		return &Thread{}, nil
	}
	t, v, err := c.repo.Get(ctx, id, atLeast)
	if err != nil {
		return nil, err
	}
	t.Version = v
	return &t, nil
}

// RunNeedsWork reports whether a run of a thread is in a status a worker moves on from, as the log holds it now.
// It is asked by a worker that has just let go of the run, which it left waiting for tool outputs or ended: only a
// submission of tool outputs or a cancel hands such a run back. When the log holds neither after the thread this
// node holds, the run stands as held, and the thread is not read (asking where the thread's every subject ends
// answers with the last event of each).
func (c *Threads) RunNeedsWork(ctx context.Context, threadID, runID string) (bool, error) {
	if !validID(threadID) {
		return false, nil
	}
	var held events.Version
	needs := false
	check := func(t *Thread, v events.Version) error {
		held, needs = v, t.NeedsWork(runID)
		return nil
	}
	// As of sequence 1: the thread as this node holds it (any state it holds is past that), read only if it holds
	// none.
	if err := c.repo.Read(ctx, threadID, 1, check); err != nil || needs {
		return needs, err
	}
	var subjects []string
	for _, e := range []events.Event{events.RunToolOutputsSubmitted{}, events.RunCancelling{}} {
		_, name := events.SplitType(e.EventType())
		subjects = append(subjects, c.store.Names().EventSubject("thread", threadID, name))
	}
	last, ok := c.store.SettledHead(ctx, subjects...)
	if ok && last <= held.Seq {
		return false, nil
	}
	err := c.repo.Read(ctx, threadID, eventstore.Fresh, check)
	return needs, err
}
