// Package julepchat makes a Julep chat's prompt, as Julep does and where it stopped: the session's agents and users,
// the generation settings (the agent's defaults under the request's), the tools offered (the agent's and the
// request's, as functions, with the parameters the scope fixes taken out: x-tool-parameters), the docs recalled
// (text, vector or hybrid over the agent's and the users' docs), the system template rendered with Julep's
// variables, the input rendered when the session renders templates, and the history fitted into the token budget
// (truncate drops the oldest turns; adaptive puts the latest summary in place of the turns it covers). The chat
// handler prepares each turn with it and records the outcome (session.chat_prepared); the face's render answers
// with it and records nothing.
//
// It imports the domain, events, the docs index, jinja, llm and tokens; never a face or a handler.
package julepchat
