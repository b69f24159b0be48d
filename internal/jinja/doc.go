// Package jinja renders the Jinja templates Julep uses: a session's system template (with the variables agent,
// agents, user, users, session, situation, docs, tools, ...), and the prompts, logs and messages of a task's steps.
// It wraps github.com/nikolalohinski/gonja/v2 with what a multi-tenant server needs around user-written templates:
//
//   - no file system: include, import, from, extends, block, macro and call are refused when the template is
//     compiled (gonja's default loader would read any file the process can read);
//   - bounds: the output, every value a template builds (string concatenation, repetition, filters, set), the
//     number of operations and the wall time are limited, so a template cannot loop for ever, double a string
//     until the process runs out of memory, or render gigabytes;
//   - errors that name the template and the line, as an errs.Invalid error (the template is the user's input);
//   - Jinja's own rule that division by zero is an error (gonja prints NaN or +Inf): Julep's default template
//     writes {{ 0/0 }} to refuse tools whose type it does not support, and the error then names those tools;
//   - the environment Julep renders with: trim_blocks and lstrip_blocks on, no autoescaping, NEWLINE, true,
//     false and null defined; no randomness (the random filter and lipsum are absent), so a task's step renders
//     the same text when it is replayed.
//
// It holds no state between calls and must not import the platform, NATS or HTTP packages.
package jinja
