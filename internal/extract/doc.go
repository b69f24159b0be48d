// Package extract turns an uploaded file into the plain text that search indexes: plain text, markdown and source
// code, JSON, CSV, HTML (its visible text), PDF and DOCX. It streams: a file's text is written to an io.Writer as
// it is read, so a large file is never held in memory whole (a PDF is held one page at a time).
//
// A file it cannot use fails with an *Error whose Code is one of OpenAI's last_error codes for vector store files:
// unsupported_file for a kind of file it cannot read, invalid_file for a file of a known kind that is corrupt, empty
// or holds no text. Any other error (the writer failing, the context ending) is not the file's fault and is returned
// as it is.
//
// It imports no other Contrail package: callers hand it bytes and get text back.
package extract
