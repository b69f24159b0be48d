package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/julepdocs"
)

// JulepDocRepo is the node's repository of Julep docs.
type JulepDocRepo = eventstore.Repo[julep.DocState, *julep.DocState]

// JulepDocs are the commands on Julep's docs: add one to an agent or a user (embedded and indexed before the call
// returns), delete one, search an owner's docs, embed text.
type JulepDocs struct {
	repo   *JulepDocRepo
	agents *JulepAgents
	users  *JulepUsers
	index  *julepdocs.Index
}

// NewJulepDocs returns the doc commands over the node's docs index.
func NewJulepDocs(repo *JulepDocRepo, agents *JulepAgents, users *JulepUsers, index *julepdocs.Index) *JulepDocs {
	return &JulepDocs{repo: repo, agents: agents, users: users, index: index}
}

// NewDoc is what adding a doc takes.
type NewDoc struct {
	Title string
	// Content is a JSON string or a JSON list of strings.
	Content          json.RawMessage
	Metadata         json.RawMessage
	EmbedInstruction string
}

// CheckOwner returns nil when the owner is an agent or a user of the caller's account.
func (c *JulepDocs) CheckOwner(ctx context.Context, actor auth.Principal, o events.DocOwner) error {
	switch o.Role {
	case "agent":
		_, err := c.agents.Get(ctx, actor, o.ID)
		return err
	case "user":
		_, err := c.users.Get(ctx, actor, o.ID)
		return err
	}
	return errs.InvalidField("owner", "a doc belongs to an agent or a user")
}

// Create adds a doc to an agent or a user of the caller's account. Its snippets are embedded and the doc indexed
// before it returns, so the doc is found by the next search; its ID derives from request, and the same request
// again returns the doc it made without embedding anything.
func (c *JulepDocs) Create(ctx context.Context, actor auth.Principal, request string, owner events.DocOwner, in NewDoc) (Written[julep.Doc], error) {
	texts, err := checkDoc(in)
	if err != nil {
		return Written[julep.Doc]{}, err
	}
	if err := c.CheckOwner(ctx, actor, owner); err != nil {
		return Written[julep.Doc]{}, err
	}
	id := events.DeriveUUID(request, "doc")
	if d, err := c.Get(ctx, actor, id); err == nil {
		return Written[julep.Doc]{Object: d}, nil // the same request again
	}
	snippets, err := c.index.Snippets(ctx, texts)
	if err != nil {
		return Written[julep.Doc]{}, fmt.Errorf("create doc: %w", err)
	}
	name, dim := c.index.EmbedderName()
	ev := events.DocCreated{Owner: owner, Title: in.Title, Content: in.Content, Metadata: in.Metadata,
		EmbedInstruction: in.EmbedInstruction, Snippets: snippets, Embedder: name, Dim: dim}
	w, err := writeJulep(ctx, c.repo, actor, id, "doc", "create doc", func(s *julep.DocState) ([]events.Event, error) {
		return julep.CreateDoc(s, actor.AccountID, ev)
	}, func(s *julep.DocState) julep.Doc { return s.Doc })
	if err != nil {
		return w, err
	}
	if err := c.index.Add(ctx, w.Object); err != nil {
		return w, err
	}
	return w, nil
}

// checkDoc checks a doc and returns its snippets' texts.
func checkDoc(in NewDoc) ([]string, error) {
	if err := checkText("title", in.Title, maxJulepDocTitle); err != nil {
		return nil, err
	}
	if err := checkJSONObject("metadata", in.Metadata); err != nil {
		return nil, err
	}
	if err := checkText("embed_instruction", in.EmbedInstruction, maxJulepAbout); err != nil {
		return nil, err
	}
	if len(in.Content) > maxJulepDocBytes {
		return nil, errs.InvalidField("content", "content is %d bytes of JSON; a doc holds at most %d", len(in.Content), maxJulepDocBytes)
	}
	texts := julep.ContentStrings(in.Content)
	if len(texts) == 0 {
		return nil, errs.InvalidField("content", "content must be a string or a non-empty list of strings")
	}
	if err := checkCount("content", len(texts), maxJulepDocSnippets); err != nil {
		return nil, err
	}
	for i, t := range texts {
		field := fmt.Sprintf("content[%d]", i)
		if len(texts) == 1 {
			field = "content"
		}
		if !utf8.ValidString(t) {
			return nil, errs.InvalidField(field, "%s is not valid UTF-8", field)
		}
		if err := checkChars(field, t, maxJulepDocSnippet); err != nil {
			return nil, err
		}
	}
	return texts, nil
}

// Delete deletes a doc of an owner of the caller's account.
func (c *JulepDocs) Delete(ctx context.Context, actor auth.Principal, owner events.DocOwner, id string, retry bool) (Written[julep.Doc], error) {
	if err := c.CheckOwner(ctx, actor, owner); err != nil {
		return Written[julep.Doc]{}, err
	}
	w, err := writeJulep(ctx, c.repo, actor, id, "doc", "delete doc", func(s *julep.DocState) ([]events.Event, error) {
		return julep.DeleteDoc(s, actor.AccountID, id, owner, retry)
	}, func(s *julep.DocState) julep.Doc { return s.Doc })
	if err != nil {
		return w, err
	}
	return w, c.index.Remove(ctx, actor.AccountID, id, owner)
}

// Get returns a doc of the caller's account.
func (c *JulepDocs) Get(ctx context.Context, actor auth.Principal, id string) (julep.Doc, error) {
	return readJulep(ctx, c.repo, actor, id, "doc", func(s *julep.DocState) (julep.Doc, bool) {
		return s.Doc, s.Owned(actor.AccountID)
	})
}

// Search finds the docs of the caller's owners that best match q.
func (c *JulepDocs) Search(ctx context.Context, actor auth.Principal, q julepdocs.Query) ([]julepdocs.Ref, error) {
	for _, o := range q.Owners {
		if err := c.CheckOwner(ctx, actor, o); err != nil {
			return nil, err
		}
	}
	q.Account = actor.AccountID
	return c.index.Search(ctx, q)
}

// Embed makes the vectors of texts with the platform's embedder (Julep's POST /embed).
func (c *JulepDocs) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, errs.Missing("text")
	}
	if err := checkCount("text", len(texts), maxJulepEmbedTexts); err != nil {
		return nil, err
	}
	for i, t := range texts {
		if err := checkText(fmt.Sprintf("text[%d]", i), t, maxJulepDocSnippet); err != nil {
			return nil, err
		}
	}
	return c.index.Embed(ctx, texts)
}
