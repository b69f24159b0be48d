// Package chunk cuts extracted text into the overlapping windows of tokens that search indexes, as OpenAI's vector
// stores do (chunking_strategy auto: 800 tokens with 400 of overlap; static: sizes the caller picks), and makes
// Julep's snippets (each string of a doc's content is one chunk). Tokens are counted in cl100k_base, the encoding of
// OpenAI's embedding models.
//
// Every chunk knows where it lies in the text, in bytes and in characters, so that a citation can point back into
// the file; its text is exactly the text between those offsets. Cutting streams: a Writer takes the text as an
// extractor writes it and hands out chunks as they fill, holding about one chunk of text at a time.
//
// It imports only the token counter (internal/llm/tokens) and the error vocabulary.
package chunk
