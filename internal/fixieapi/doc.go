// Package fixieapi is the Fixie face's REST extras under /api: embed uploads and their signed URLs
// (/api/embeds), and a session's raw events read from the log (/api/sessions/{handle}/events), which
// `contrail replay session` prints. /api is shared with other faces, so each face here mounts its own sub-prefix.
//
// Faces call commands for writes and read the log or read models; they never append events themselves.
package fixieapi
