// Package chats holds the handlers that answer Julep sessions' chats and keep their history within budget:
//
//   - the chat handler (Turns) reacts to a chat asked and to each step of it, and does the turn's next step: prepare
//     it (recall docs, render the templates, fit the history into the token budget: session.chat_prepared), call
//     the model (streaming its words on the session's live subject), run a tool the model asked for when the
//     platform runs it (system and api_call tools, with auto_run_tools: session.chat_tool_ran, then the model
//     again), and end the turn (session.chat_answered, or chat_failed with a reason the user reads). Turns run one
//     at a time, in order, each with the history of those before it.
//   - the summarizer (Summarizer) reacts to a turn answered in an adaptive session whose history has passed 75% of
//     its token budget, and records a summary of the older turns (session.summarized), which later turns send in
//     their place. The chat that set it off has its answer already: nobody waits for a summary. Only a whole
//     summary is recorded: when the model cannot summarise (the offline model), declines, fails or is cut off at
//     its token limit, it records session.summary_failed instead (once for a reason), the turns stay, and the
//     chat's prompt truncates them, saying so, once they are over the budget.
//
// Every event appended derives its ID from the turn's request and is decided on the session as of the event
// reacted to (domain/session), so a redelivery appends nothing new; each delivery does one step, so a crash resumes
// from the last recorded one on any node, and `contrail replay session` shows each.
//
// It imports the domain, events, the prompt maker (julepchat), llm and the api_call client; never a face.
package chats
