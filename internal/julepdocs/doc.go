// Package julepdocs keeps Julep's docs searchable on a node: one docindex collection per owner (an agent's docs, a
// user's), fed from the log (doc.created carries each snippet's vector, so nothing is embedded twice, on this node
// or another, before or after a restart), and searched by text, vector or both for Julep's search endpoints and a
// chat's recall.
//
// A doc is searchable the moment its create call returns: the create path embeds the snippets (Embed), appends the
// doc with its vectors and indexes it here at once (Add); the feed adds it again from the log, which replaces it with
// the same thing. A search on another node first waits for its feed to reach the log's last doc event, so a doc made
// anywhere is found everywhere as soon as its create returned.
//
// It imports events, the domain, docindex and embedding; never a face or a handler.
package julepdocs
