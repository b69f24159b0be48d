package agents

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/llm"
)

// FixieID is the ID (and handle) of the built-in front agent, the default of every session.
const FixieID = "fixie"

// fixiePrompt is the front agent's instruction. It answers directly until the Code Shot issue gives it a router to
// delegate to.
const fixiePrompt = "You are Fixie, the front agent of a Contrail session. Answer the user's latest message " +
	"helpfully and concisely, using the conversation so far as context. Attachments are named by their key, as #key."

// maxHistoryMessages bounds the chat log sent to the model: the latest messages matter most, and a long session
// must not outgrow the model's context.
const maxHistoryMessages = 50

// Fixie is the built-in front agent: it answers with the platform's model, streaming the answer as it comes.
type Fixie struct {
	model     llm.Provider
	modelName string
}

// NewFixie returns the front agent over a model (the platform's router). modelName is the model string it asks for;
// "" lets the router's default provider choose.
func NewFixie(model llm.Provider, modelName string) *Fixie {
	return &Fixie{model: model, modelName: modelName}
}

// FixieBuiltin is the built-in entry of the front agent.
func FixieBuiltin(model llm.Provider, modelName string) Builtin {
	return Builtin{
		Info: Info{
			ID: FixieID, Handle: FixieID, Name: "Fixie", Kind: KindBuiltin, Published: true,
			Description: "The front agent: it answers a session's queries, using the session's chat log as context.",
			Queries:     []string{"What can you do?", "Summarise our conversation so far."},
		},
		Agent: NewFixie(model, modelName),
	}
}

// Reply implements Agent.
func (f *Fixie) Reply(ctx context.Context, q Query) (Reply, error) {
	req := llm.Request{Model: f.modelName, Messages: ChatMessages(fixiePrompt, q)}
	var onDelta func(llm.Delta)
	if q.Stream != nil {
		onDelta = func(d llm.Delta) {
			if d.Text != "" {
				q.Stream(d.Text)
			}
		}
	}
	resp, err := f.model.Complete(ctx, req, onDelta)
	if err != nil {
		return Reply{}, fmt.Errorf("fixie: %w", err)
	}
	return Reply{Text: resp.Text}, nil
}

// ChatMessages turns a query and its history into a chat for a model: the system prompt, then the latest messages
// (queries as the user's, responses as the assistant's; failures are left out), then the query.
func ChatMessages(system string, q Query) []llm.Message {
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: system}}
	history := q.History
	if len(history) > maxHistoryMessages {
		history = history[len(history)-maxHistoryMessages:]
	}
	for _, m := range history {
		switch m.Type {
		case events.MessageQuery:
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: withEmbeds(m)})
		case events.MessageResponse:
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: withEmbeds(m)})
		}
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: withEmbeds(q.Message)})
}

// withEmbeds appends a note of the message's attachments to its text, so the model knows what #key means.
func withEmbeds(m Message) string {
	if len(m.Embeds) == 0 {
		return m.Text
	}
	keys := make([]string, 0, len(m.Embeds))
	for k := range m.Embeds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(m.Text)
	b.WriteString("\n\nAttachments:")
	for _, k := range keys {
		fmt.Fprintf(&b, "\n#%s: %s", k, m.Embeds[k].ContentType)
	}
	return b.String()
}
