// Package docindex searches documents cut into chunks: the files of an OpenAI vector store, the docs of a Julep agent
// or user. Each collection is a keyword index (BM25, blevesearch/bleve) and a vector index (cosine similarity,
// philippgille/chromem-go) over the same chunks, searched by text, by vector, or by both (hybrid), with attribute
// filters (OpenAI's comparison and compound filters, Julep's metadata_filter), a score threshold, and maximal
// marginal relevance for diversity.
//
// The index embeds chunks that come without a vector, with the embedder it was given, and hands the vectors back so
// that the caller stores them: after a restart the caller adds the chunks again with their vectors and nothing is
// embedded twice. A chunk is searchable as soon as Add returns.
//
// It holds chunks and vectors in memory, and the keyword index's segments in a scratch directory it owns and wipes:
// the stored chunks are the truth, and the index is rebuilt from them at start (10,000 chunks of 800 tokens take
// a few seconds; see the benchmarks). Each collection costs three goroutines and about two open files (bleve's
// scorch index), so a node with tens of thousands of collections needs a higher open-file limit.
//
// It imports embedding and chunk, and nothing of the log, the read models or the faces.
package docindex
