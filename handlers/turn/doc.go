// Package turn is the machinery of one model call that the Assistants run worker (handlers/runworker) and the
// Responses model loop (handlers/responder) share below their aggregates: how the server tools are offered to the
// model and read back (file_search's queries, its results as the model reads them and the citations it makes of
// them; code_interpreter's code, its outputs and what the model reads of them), how the context the model reads is
// cut ("truncation"), how a failed model call is named, the IDs of tool calls the model left unnamed, the
// bookkeeping of a streamed answer's pieces, the offline model's quoting answer to a search, and the image files a
// request shows the model (read through the caller's ImageFiles).
//
// What stays with each caller is its aggregate: a run with steps and messages, a response with items. Their events,
// lifecycles and wire shapes differ on purpose, so each renders the shared results in its own shape (an Assistants
// file_citation carries the marker's text and range, a Responses one the file's name and the marker's index).
//
// The rules here speak the model's types (internal/llm), which the domain may not import, so they live with the
// handlers. It imports events, llm and errs only: nothing of NATS; what waits (a model call, a file read) it reaches
// through what the caller passes in.
package turn
