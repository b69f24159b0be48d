package agents

import (
	"fmt"
	"sort"
	"strings"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/llm"
)

// The built-in agents' IDs (and handles).
const (
	// FixieID is the front agent, the default of every session.
	FixieID = "fixie"
	// RouterID is the router: the agents closest to a query by embedding search over their sample queries.
	RouterID = "router"
)

// Builtins are the built-in agents' entries.
func Builtins() []Info {
	return []Info{
		{ID: FixieID, Handle: FixieID, Name: "Fixie", Kind: KindBuiltin, Published: true,
			Description: "The front agent: it finds the agent that can answer a query (by the router) and asks it; " +
				"when none fits, it answers itself.",
			Queries: []string{"What can you do?", "Summarise our conversation so far."}},
		{ID: RouterID, Handle: RouterID, Name: "Router", Kind: KindBuiltin, Published: true,
			Description: "Finds the agents that can answer a query, by comparing it with every agent's sample queries.",
			Queries:     []string{"Which agent can tell me the weather?"}},
	}
}

// FixiePrompt is the front agent's instruction when it answers a query itself with the platform's model.
const FixiePrompt = "You are Fixie, the front agent of a Contrail session. Answer the user's latest message " +
	"helpfully and concisely, using the conversation so far as context. Attachments are named by their key, as #key."

// FixieFewShots are the front agent's few-shots when a real model plans: think, ask the router who can answer,
// ask that agent, answer (seed 000's flow).
var FixieFewShots = []string{
	"Q: Generate a random number between 1 and 10\n" +
		"Thought: I need an agent that generates random numbers.\n" +
		"Ask Agent[router]: Generate a random number between 1 and 10\n" +
		"Agent[router] says: genrand\n" +
		"Ask Agent[genrand]: Generate a random number between 1 and 10\n" +
		"Agent[genrand] says: The random number is 7.\n" +
		"A: The random number is 7.",
	"Q: What is 12 times 7, and what is the current price of GOOG?\n" +
		"Thought: This has two parts. First the arithmetic.\n" +
		"Ask Agent[router]: What is 12 times 7?\n" +
		"Agent[router] says: calc\n" +
		"Ask Agent[calc]: What is 12 times 7?\n" +
		"Agent[calc] says: 12 times 7 is 84.\n" +
		"Thought: Now the stock price.\n" +
		"Ask Agent[router]: What is the current price of GOOG?\n" +
		"Agent[router] says: stock\n" +
		"Ask Agent[stock]: What is the current price of GOOG?\n" +
		"Agent[stock] says: The current price for GOOG is $105.22.\n" +
		"A: 12 times 7 is 84, and GOOG trades at $105.22.",
	"Q: Hello! Who are you?\n" +
		"Thought: This is small talk; no agent is needed.\n" +
		"A: Hello! I am Fixie, the front agent of this platform. Ask me anything: I find the agent that can answer.",
}

// FixieBasePrompt is the front agent's base prompt when a real model plans.
const FixieBasePrompt = "I am Fixie, the front agent of the platform. I break the user's query into steps, ask the " +
	"router which agent can do each step, ask that agent, and compose the answer. When the router says none, I " +
	"answer myself."

// maxHistoryMessages bounds the chat log sent to the model: the latest messages matter most, and a long session
// must not outgrow the model's context.
const maxHistoryMessages = 50

// ChatMessages turns a query and the chat log before it into a chat for a model: the system prompt, then the
// latest messages (queries as the user's, responses as the assistant's; failures are left out), then the query.
func ChatMessages(system string, history []session.Message, query session.Message) []llm.Message {
	if len(history) > maxHistoryMessages {
		history = history[len(history)-maxHistoryMessages:]
	}
	msgs := make([]llm.Message, 0, len(history)+2)
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: system})
	for _, m := range history {
		switch m.Type {
		case events.MessageQuery:
			msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: withEmbeds(m)})
		case events.MessageResponse:
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: withEmbeds(m)})
		}
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: withEmbeds(query)})
}

// Exchanges renders the chat log's finished exchanges for a conversational Code Shot agent: "Q: ...\nA: ...".
func Exchanges(history []session.Message) []string {
	var out []string
	var pending string
	for _, m := range history {
		switch m.Type {
		case events.MessageQuery:
			pending = session.OneLine(m.Text)
		case events.MessageResponse:
			if pending != "" {
				out = append(out, "Q: "+pending+"\nA: "+session.OneLine(m.Text))
				pending = ""
			}
		}
	}
	return out
}

// withEmbeds appends a note of the message's attachments to its text, so the model knows what #key means.
func withEmbeds(m session.Message) string {
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
