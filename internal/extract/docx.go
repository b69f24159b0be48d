package extract

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"path"
	"strings"
)

// maxDocumentXML bounds the uncompressed size of a Word document's body, against zip bombs.
const maxDocumentXML = 1 << 30

// extractDOCX writes the text of a Word document: the runs of text of word/document.xml (or the main part its
// relationships name), tabs and line breaks as they are, one line per paragraph. Deleted text of tracked changes
// and field codes are left out. named says the file was named .docx: a zip that is not a Word document is then
// invalid, otherwise unsupported.
func extractDOCX(ctx context.Context, r io.ReaderAt, size int64, s *sink, named bool) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return invalid(err, "the Word document is corrupt (not a readable zip archive)")
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		files[f.Name] = f
	}
	main := mainPart(files)
	f := files[main]
	if f == nil {
		switch {
		case files["xl/workbook.xml"] != nil:
			return unsupported("Excel files are not supported; upload text, markdown, json, csv, html, pdf or docx")
		case files["ppt/presentation.xml"] != nil:
			return unsupported("PowerPoint files are not supported; upload text, markdown, json, csv, html, pdf or docx")
		case named:
			return invalid(nil, "the Word document has no body (%s is missing)", main)
		}
		return unsupported("zip archives are not supported; upload text, markdown, json, csv, html, pdf or docx")
	}
	rc, err := f.Open()
	if err != nil {
		return invalid(err, "the Word document is corrupt")
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: maxDocumentXML + 1}
	if err := documentText(ctx, lr, s); err != nil {
		if lr.N <= 0 {
			return invalid(nil, "the Word document's body is over %d MB uncompressed", maxDocumentXML>>20)
		}
		return err
	}
	return nil
}

// mainPart finds the document's main part from the package relationships, as Word does; a package without them
// is taken to keep it where Word puts it.
func mainPart(files map[string]*zip.File) string {
	const fallback = "word/document.xml"
	f := files["_rels/.rels"]
	if f == nil {
		return fallback
	}
	rc, err := f.Open()
	if err != nil {
		return fallback
	}
	defer rc.Close()
	var rels struct {
		Rel []struct {
			Type   string `xml:"Type,attr"`
			Target string `xml:"Target,attr"`
		} `xml:"Relationship"`
	}
	if xml.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&rels) != nil {
		return fallback
	}
	for _, rel := range rels.Rel {
		if strings.HasSuffix(rel.Type, "/officeDocument") {
			return strings.TrimPrefix(path.Clean("/"+rel.Target), "/")
		}
	}
	return fallback
}

// documentText walks the body's XML as a stream. Elements are matched by local name, so that both the
// transitional and the strict WordprocessingML namespaces are read (and DrawingML text boxes, whose runs are
// also <t>).
func documentText(ctx context.Context, r io.Reader, s *sink) error {
	dec := xml.NewDecoder(r)
	inText := false
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tok, err := dec.Token() // not RawToken: Token checks that elements close
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if s.err != nil {
				return s.err
			}
			return invalid(err, "the Word document's XML is malformed")
		}
		var out string
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				out = "\t"
			case "br", "cr":
				out = "\n"
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				out = "\n"
			}
		case xml.CharData:
			if inText {
				if _, err := s.Write(t); err != nil {
					return err
				}
			}
		}
		if out != "" {
			if _, err := s.WriteString(out); err != nil {
				return err
			}
		}
	}
}
