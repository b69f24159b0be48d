package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/contrailhq/contrail/domain/conversation"
	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
)

// The response and conversation aggregates' states and decisions are domain/response's and domain/conversation's.
type (
	Response     = response.State
	Conversation = conversation.State
	ResponseEnd  = response.End
)

// Responses are the commands on responses (the Responses API): those of clients (create, cancel, delete) and those
// of the model loop (handlers/responder: start, record a turn, finish, append to the conversation).
type Responses struct {
	store *eventstore.Store
	repo  *eventstore.Repo[response.State, *response.State]
	convs *Conversations
	files *Files
}

// NewResponses returns the response commands; they share conversations' repository with convs.
func NewResponses(store *eventstore.Store, convs *Conversations, files *Files) *Responses {
	return &Responses{store: store, repo: eventstore.NewRepo[response.State](store, "response", 4096), convs: convs, files: files}
}

// Conversations are the commands on conversations and their items.
type Conversations struct {
	store *eventstore.Store
	repo  *eventstore.Repo[conversation.State, *conversation.State]
}

// NewConversations returns the conversation commands.
func NewConversations(store *eventstore.Store) *Conversations {
	return &Conversations{store: store, repo: eventstore.NewRepo[conversation.State](store, "conversation", 1024)}
}

// maxInputItems bounds a response's input list.
const maxInputItems = 2048

// NewItemID is a fresh ID for an item of a type, with OpenAI's prefix for it.
func NewItemID(typ string) string {
	prefix := "item_"
	switch typ {
	case "message":
		prefix = "msg_"
	case "function_call":
		prefix = "fc_"
	case "function_call_output":
		prefix = "fco_"
	case "file_search_call":
		prefix = "fs_"
	case "code_interpreter_call":
		prefix = "ci_"
	}
	return events.NewPrefixedID(prefix)
}

// identify gives every item an ID: the one a client sent when it can be one (the Agents SDK re-sends earlier output
// items with theirs), else a fresh one. An item_reference keeps the ID it refers to.
func identify(items []events.Item) []events.Item {
	out := slices.Clone(items)
	for i := range out {
		if ids.Valid(ids.Token, out[i].ID) {
			continue
		}
		out[i].ID = NewItemID(out[i].Type)
	}
	return out
}

// Create records a response (id chosen by the face, so that a stream can watch it first). The references it
// makes (previous_response_id, conversation) must be the caller's, else they are not found.
func (c *Responses) Create(ctx context.Context, actor auth.Principal, id string, in events.ResponseCreated) (eventstore.Appended, error) {
	if err := ids.Check("id", ids.Response, id); err != nil {
		return eventstore.Appended{}, err
	}
	if len(in.Input) > maxInputItems {
		return eventstore.Appended{}, errs.InvalidField("input", "at most %d input items are allowed, got %d", maxInputItems, len(in.Input))
	}
	if err := ValidateMetadata("metadata", in.Metadata); err != nil {
		return eventstore.Appended{}, err
	}
	if in.PreviousResponseID != "" && in.ConversationID != "" {
		return eventstore.Appended{}, errs.InvalidField("conversation", "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.")
	}
	if in.PreviousResponseID != "" {
		if err := ids.Check("previous_response_id", ids.Response, in.PreviousResponseID); err != nil {
			return eventstore.Appended{}, err
		}
		prev, _, err := c.repo.Get(ctx, in.PreviousResponseID, eventstore.Fresh)
		if err != nil {
			return eventstore.Appended{}, fmt.Errorf("load previous response: %w", err)
		}
		if !prev.Retrievable(actor.AccountID) {
			return eventstore.Appended{}, previousNotFound(in.PreviousResponseID)
		}
	}
	if in.ConversationID != "" {
		if err := ids.Check("conversation", ids.Conversation, in.ConversationID); err != nil {
			return eventstore.Appended{}, err
		}
		conv, _, err := c.convs.repo.Get(ctx, in.ConversationID, eventstore.Fresh)
		if err != nil {
			return eventstore.Appended{}, fmt.Errorf("load conversation: %w", err)
		}
		if !conv.Owned(actor.AccountID) {
			e := errs.NotFoundf("conversation", in.ConversationID)
			e.Field = "conversation"
			return eventstore.Appended{}, e
		}
	}
	in.Input = identify(in.Input)
	meta := events.Meta{Account: actor.AccountID, Actor: actor.Actor(), CorrelationID: id}
	return c.repo.Update(ctx, id, eventstore.Fresh, meta, func(s *response.State) ([]events.Event, error) {
		if s.Exists {
			return nil, errs.E(errs.Conflict, "response %s exists already", id)
		}
		return []events.Event{in}, nil
	})
}

func previousNotFound(id string) error {
	e := errs.E(errs.NotFound, "Previous response with id '%s' not found.", id)
	e.Field = "previous_response_id"
	return e
}

// Get returns a response the caller may read, as of at least stream sequence atLeast (eventstore.Fresh: now).
func (c *Responses) Get(ctx context.Context, account, id string, atLeast uint64) (response.State, error) {
	if !ids.Valid(ids.Response, id) {
		return response.State{}, errs.NotFoundf("response", id)
	}
	s, _, err := c.repo.Get(ctx, id, atLeast)
	if err != nil {
		return s, fmt.Errorf("load response %s: %w", id, err)
	}
	if !s.Retrievable(account) {
		return s, errs.E(errs.NotFound, "Response with id '%s' not found.", id)
	}
	return s, nil
}

// Load returns a response as the loop sees it, whoever owns it.
func (c *Responses) Load(ctx context.Context, id string, atLeast uint64) (response.State, error) {
	s, _, err := c.repo.Get(ctx, id, atLeast)
	if err != nil {
		return s, fmt.Errorf("load response %s: %w", id, err)
	}
	return s, nil
}

// Delete deletes a response the caller may read.
func (c *Responses) Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error) {
	if _, err := c.Get(ctx, actor.AccountID, id, eventstore.Fresh); err != nil {
		return eventstore.Appended{}, err
	}
	return c.repo.Update(ctx, id, eventstore.Fresh, events.Meta{Account: actor.AccountID, Actor: actor.Actor()},
		func(s *response.State) ([]events.Event, error) { return response.Delete(s), nil })
}

// Cancel ends a background response that is still queued or in progress; OpenAI refuses it for others.
func (c *Responses) Cancel(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error) {
	s, err := c.Get(ctx, actor.AccountID, id, eventstore.Fresh)
	if err != nil {
		return eventstore.Appended{}, err
	}
	if !s.Request.Background {
		return eventstore.Appended{}, errs.E(errs.Invalid, "Only responses created with background=true can be cancelled.")
	}
	return c.repo.Update(ctx, id, eventstore.Fresh, events.Meta{Account: actor.AccountID, Actor: actor.Actor()},
		func(s *response.State) ([]events.Event, error) { return response.Cancel(s), nil })
}

// update runs a loop's decision on the response and returns the state after it.
func (c *Responses) update(ctx context.Context, r response.State, decide func(s *response.State) []events.Event) (response.State, error) {
	id := r.ID
	app, err := c.repo.Update(ctx, id, eventstore.Fresh, events.Meta{Account: r.Account, CausationID: r.CreatedBy, CorrelationID: id, Actor: "responder"},
		func(s *response.State) ([]events.Event, error) { return decide(s), nil })
	if err != nil {
		return response.State{}, fmt.Errorf("record on response %s: %w", id, err)
	}
	return c.Load(ctx, id, app.LastSeq())
}

// Start puts a queued response in progress.
func (c *Responses) Start(ctx context.Context, s response.State) (response.State, error) {
	return c.update(ctx, s, response.Start)
}

// RecordTurn records a model call's items, the close of the turn and, when end says so, the response's end.
func (c *Responses) RecordTurn(ctx context.Context, s response.State, turn int, items []events.Item, usage events.TokenUsage, end response.End, finish bool) (response.State, error) {
	return c.update(ctx, s, func(st *response.State) []events.Event {
		return response.Turn(st, turn, items, usage, end, finish)
	})
}

// RecordStart records that a server tool's call is about to be made in turn (response.CallStarted), before it is.
// It returns response.ErrNotStarted when the call must not be made.
func (c *Responses) RecordStart(ctx context.Context, s response.State, turn int, it events.Item) (response.State, error) {
	var ok bool
	st, err := c.update(ctx, s, func(st *response.State) []events.Event {
		var evs []events.Event
		evs, ok = response.CallStarted(st, turn, it)
		return evs
	})
	if err != nil {
		return st, err
	}
	if !ok {
		return st, response.ErrNotStarted
	}
	return st, nil
}

// Finish ends the response in progress.
func (c *Responses) Finish(ctx context.Context, s response.State, end response.End) (response.State, error) {
	return c.update(ctx, s, func(st *response.State) []events.Event {
		return response.Finish(st, events.TokenUsage{}, end)
	})
}

// History is what the model reads before the response's own input: the items of its conversation, or the
// context of its previous response and of the ones before it (each its input, then its output).
func (c *Responses) History(ctx context.Context, s response.State) ([]events.Item, error) {
	if id := s.Request.ConversationID; id != "" {
		conv, _, err := c.convs.repo.Get(ctx, id, eventstore.Fresh)
		if err != nil {
			return nil, fmt.Errorf("load conversation %s: %w", id, err)
		}
		if !conv.Owned(s.Account) {
			return nil, nil
		}
		return conv.Live(), nil
	}
	var chain [][]events.Item
	for id, n := s.Request.PreviousResponseID, 0; id != "" && n < 1000; n++ {
		prev, _, err := c.repo.Get(ctx, id, eventstore.Fresh)
		if err != nil {
			return nil, fmt.Errorf("load previous response %s: %w", id, err)
		}
		if !prev.Owned(s.Account) {
			break
		}
		chain = append(chain, prev.Context())
		id = prev.Request.PreviousResponseID
	}
	slices.Reverse(chain)
	return slices.Concat(chain...), nil
}

// AppendToConversation appends a response's input and output to its conversation, once; a response kept out of
// the store (store: false) writes nothing there.
func (c *Responses) AppendToConversation(ctx context.Context, s response.State) error {
	if !s.JoinsConversation() {
		return nil
	}
	id := s.Request.ConversationID
	items := slices.Concat(s.Request.Input, s.Output)
	_, err := c.convs.repo.Update(ctx, id, eventstore.Fresh, events.Meta{Account: s.Account, CausationID: s.CreatedBy, Actor: "responder"},
		func(conv *conversation.State) ([]events.Event, error) {
			if conv.Account != s.Account {
				return nil, nil
			}
			return conversation.AddResponse(conv, s.ID, items), nil
		})
	if err != nil {
		return fmt.Errorf("append response %s to conversation %s: %w", s.ID, id, err)
	}
	return nil
}

// CheckFile checks that a file a request names is the caller's (param names it in the error).
func (c *Responses) CheckFile(ctx context.Context, account, param, id string) error {
	if err := ids.Check(param, ids.File, id); err != nil {
		return err
	}
	f, _, err := c.files.loadFile(ctx, id)
	if err != nil {
		return err
	}
	if !f.Exists || f.Deleted || f.Account != account {
		e := errs.NotFoundf("file", id)
		e.Field = param
		return e
	}
	return nil
}

// CheckImage checks that a file a request shows as an image (input_image by file_id) is the caller's and one a model
// can be shown (Files.ReadImage); param names it in the error.
func (c *Responses) CheckImage(ctx context.Context, account, param, id string) error {
	return c.files.CheckImage(ctx, account, param, id)
}

// Create opens a conversation with its first items.
func (c *Conversations) Create(ctx context.Context, actor auth.Principal, metadata map[string]string, items []events.Item) (string, eventstore.Appended, error) {
	if err := ValidateMetadata("metadata", metadata); err != nil {
		return "", eventstore.Appended{}, err
	}
	evs, err := conversation.Create(metadata, identify(items))
	if err != nil {
		return "", eventstore.Appended{}, err
	}
	id := events.NewPrefixedID(ids.Conversation.Prefix)
	app, err := c.repo.Update(ctx, id, eventstore.Fresh, events.Meta{Account: actor.AccountID, Actor: actor.Actor()},
		func(*conversation.State) ([]events.Event, error) { return evs, nil })
	return id, app, err
}

// Get returns a conversation of the caller's.
func (c *Conversations) Get(ctx context.Context, account, id string, atLeast uint64) (conversation.State, error) {
	if !ids.Valid(ids.Conversation, id) {
		return conversation.State{}, errs.NotFoundf("conversation", id)
	}
	s, _, err := c.repo.Get(ctx, id, atLeast)
	if err != nil {
		return s, fmt.Errorf("load conversation %s: %w", id, err)
	}
	if !s.Owned(account) {
		return s, errs.E(errs.NotFound, "Conversation with id '%s' not found.", id)
	}
	return s, nil
}

func (c *Conversations) change(ctx context.Context, actor auth.Principal, id string, decide func(s *conversation.State) ([]events.Event, error)) (eventstore.Appended, error) {
	if _, err := c.Get(ctx, actor.AccountID, id, eventstore.Fresh); err != nil {
		return eventstore.Appended{}, err
	}
	return c.repo.Update(ctx, id, eventstore.Fresh, events.Meta{Account: actor.AccountID, Actor: actor.Actor()},
		func(s *conversation.State) ([]events.Event, error) {
			if !s.Owned(actor.AccountID) {
				return nil, errs.NotFoundf("conversation", id)
			}
			return decide(s)
		})
}

// Modify replaces a conversation's metadata.
func (c *Conversations) Modify(ctx context.Context, actor auth.Principal, id string, metadata map[string]string) (eventstore.Appended, error) {
	if err := ValidateMetadata("metadata", metadata); err != nil {
		return eventstore.Appended{}, err
	}
	return c.change(ctx, actor, id, func(*conversation.State) ([]events.Event, error) {
		return []events.Event{events.ConversationModified{Metadata: metadata}}, nil
	})
}

// Delete deletes a conversation.
func (c *Conversations) Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error) {
	return c.change(ctx, actor, id, func(*conversation.State) ([]events.Event, error) {
		return []events.Event{events.ConversationDeleted{}}, nil
	})
}

// AddItems appends a client's items; it returns them with their IDs.
func (c *Conversations) AddItems(ctx context.Context, actor auth.Principal, id string, items []events.Item) ([]events.Item, eventstore.Appended, error) {
	items = identify(items)
	app, err := c.change(ctx, actor, id, func(s *conversation.State) ([]events.Event, error) {
		return conversation.Add(s, actor.AccountID, items)
	})
	return items, app, err
}

// DeleteItem removes one item.
func (c *Conversations) DeleteItem(ctx context.Context, actor auth.Principal, id, itemID string) (eventstore.Appended, error) {
	return c.change(ctx, actor, id, func(s *conversation.State) ([]events.Event, error) {
		return conversation.DeleteItem(s, actor.AccountID, itemID)
	})
}

// Ending returns a channel closed once the log shows the response ended after s (a client's cancel), for a loop
// to stop the model call it is in; stop ends the watch.
func (c *Responses) Ending(ctx context.Context, s response.State) (ended <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	ch := make(chan struct{})
	w, err := c.store.Watch(ctx, events.Ref{Type: "response", ID: s.ID})
	if err != nil {
		return ch, cancel // no watch: the call runs to its end, and the loop's next append meets the cancel
	}
	go func() {
		defer w.Close()
		for e, err := range w.FollowFrom(ctx, s.Seq+1) {
			if err != nil {
				return
			}
			switch e.Event.(type) {
			case events.ResponseCancelled, events.ResponseCompleted, events.ResponseFailed, events.ResponseIncomplete, events.ResponseDeleted:
				close(ch)
				return
			}
		}
	}()
	return ch, cancel
}
