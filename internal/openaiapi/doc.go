// Package openaiapi is the /v1 face: the OpenAI Assistants API v2 (assistants, threads, messages, runs, run steps,
// streaming) and the Files API, with OpenAI's object shapes, ID prefixes, Unix timestamps, list pagination and
// error object, so that a program written for OpenAI's hosted API runs against Contrail by changing its base URL
// and key. Writes go through the commands; reads come from the read models; streams follow the log and the live
// token deltas the run worker publishes.
//
// It also holds Fixie's OpenAI proxy (/api/openai-proxy/v1, see Proxy): chat completions and embeddings for agents,
// with the same error object.
//
// It must not be imported by handlers, commands or projections.
package openaiapi
