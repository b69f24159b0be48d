package extract_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/extract"
	"github.com/contrailhq/contrail/internal/extract/extracttest"
)

func run(t *testing.T, name string, data []byte) (string, extract.Format, error) {
	t.Helper()
	var out bytes.Buffer
	f, err := extract.Extract(context.Background(), name, bytes.NewReader(data), int64(len(data)), &out, extract.Options{})
	return out.String(), f, err
}

func mustExtract(t *testing.T, name string, data []byte, want extract.Format) string {
	t.Helper()
	text, f, err := run(t, name, data)
	if err != nil {
		t.Fatalf("extract %s: %v", name, err)
	}
	if f != want {
		t.Errorf("extract %s: format %s, want %s", name, f, want)
	}
	return text
}

func wantCode(t *testing.T, name string, data []byte, code extract.Code, msgHas string) {
	t.Helper()
	_, _, err := run(t, name, data)
	got, ok := extract.CodeOf(err)
	if !ok || got != code {
		t.Fatalf("extract %s: error %v, want %s", name, err, code)
	}
	if !strings.Contains(err.Error(), msgHas) {
		t.Errorf("extract %s: error %q does not say %q", name, err, msgHas)
	}
}

func TestPlainTextKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		data []byte
		want extract.Format
		text string
	}{
		{"notes.txt", []byte("Reset your password from the login page.\n"), extract.Text, "Reset your password from the login page.\n"},
		{"README.md", []byte("# Title\n\nSome *markdown*.\n"), extract.Markdown, "# Title\n\nSome *markdown*.\n"},
		{"main.go", []byte("package main\n\nfunc main() {}\n"), extract.Text, "package main\n\nfunc main() {}\n"},
		{"data.csv", []byte("name,price\nwidget,3.50\n\"gadget, large\",12\n"), extract.CSV, "name,price\nwidget,3.50\n\"gadget, large\",12\n"},
		{"bom.txt", []byte("\xEF\xBB\xBFcaf\xC3\xA9"), extract.Text, "café"},
		{"utf16.txt", []byte{0xFF, 0xFE, 'h', 0, 'i', 0, 0xE9, 0}, extract.Text, "hié"},
		{"latin.txt", []byte("caf\xE9 cr\xE8me \x80"), extract.Text, "café crème €"}, // Windows-1252
		{"no-extension", []byte("just some words"), extract.Text, "just some words"},
	}
	for _, c := range cases {
		if got := mustExtract(t, c.name, c.data, c.want); got != c.text {
			t.Errorf("extract %s = %q, want %q", c.name, got, c.text)
		}
	}
}

func TestInvalidUTF8LaterInTextIsReplaced(t *testing.T) {
	t.Parallel()
	data := append(bytes.Repeat([]byte("valid text "), 500), 0xC3, 'x', '\n')
	got := mustExtract(t, "a.txt", data, extract.Text)
	if !strings.HasSuffix(got, "\uFFFDx\n") {
		t.Errorf("tail = %q, want the bad byte replaced", got[len(got)-10:])
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	doc := `{"product": "widget", "tags": ["blue", "small"], "price": 3.5}`
	if got := mustExtract(t, "p.json", []byte(doc), extract.JSON); got != doc {
		t.Errorf("json = %q, want it as written", got)
	}
	lines := "{\"a\": 1}\n{\"a\": 2}\n"
	if got := mustExtract(t, "p.jsonl", []byte(lines), extract.JSON); got != lines {
		t.Errorf("jsonl = %q", got)
	}
	wantCode(t, "broken.json", []byte(`{"product": "widget", `), extract.InvalidFile, "not valid JSON")
	wantCode(t, "words.json", []byte(`hello there`), extract.InvalidFile, "not valid JSON")
}

func TestHTMLVisibleText(t *testing.T) {
	t.Parallel()
	page := `<!DOCTYPE html><html><head><title>Pricing</title>
<style>body { color: red; }</style><script>var secret = "do not index";</script></head>
<body><h1>Plans &amp; prices</h1><p>The   basic plan
costs <b>$5</b>&nbsp;a month.</p><noscript>enable JS</noscript>
<ul><li>one</li><li>two</li></ul>
<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Pro</td><td>$9</td></tr></table>
<pre>  keep   this
  layout</pre><svg><text>chart label</text></svg><p>End.</p></body></html>`
	got := mustExtract(t, "page.html", []byte(page), extract.HTML)
	want := "Pricing\n\nPlans & prices\n\nThe basic plan costs $5 a month.\n\none\ntwo\n\nPlan\tPrice\nPro\t$9\n\n  keep   this\n  layout\n\nEnd."
	if got != want {
		t.Errorf("html text =\n%q\nwant\n%q", got, want)
	}
	for _, hidden := range []string{"secret", "color", "enable JS", "chart label"} {
		if strings.Contains(got, hidden) {
			t.Errorf("html text holds hidden %q", hidden)
		}
	}
	// Sniffed without an extension.
	if got := mustExtract(t, "upload", []byte("<html><body><p>sniffed</p></body></html>"), extract.HTML); got != "sniffed" {
		t.Errorf("sniffed html = %q", got)
	}
}

func TestPDF(t *testing.T) {
	t.Parallel()
	data := extracttest.PDF(
		[]string{"Quarterly report (draft)", "Revenue grew 12 percent."},
		[]string{"Page two says hello."},
	)
	got := mustExtract(t, "report.pdf", data, extract.PDF)
	want := "Quarterly report (draft)\nRevenue grew 12 percent.\n\nPage two says hello."
	if strings.TrimSpace(got) != want {
		t.Errorf("pdf text = %q, want %q", got, want)
	}
	// Sniffed without a name.
	if got := mustExtract(t, "", data, extract.PDF); strings.TrimSpace(got) != want {
		t.Errorf("sniffed pdf text = %q", got)
	}
}

func TestDOCX(t *testing.T) {
	t.Parallel()
	data := extracttest.DOCX(`<w:p><w:r><w:t>Hello</w:t></w:r><w:r><w:t xml:space="preserve"> world</w:t></w:r></w:p>` +
		`<w:p><w:r><w:t>Name</w:t><w:tab/><w:t>Value</w:t><w:br/><w:t>next line</w:t></w:r></w:p>` +
		`<w:p><w:del><w:r><w:delText>removed words</w:delText></w:r></w:del><w:r><w:instrText>PAGE</w:instrText><w:t>kept &amp; escaped</w:t></w:r></w:p>`)
	got := mustExtract(t, "memo.docx", data, extract.DOCX)
	want := "Hello world\nName\tValue\nnext line\nkept & escaped\n"
	if got != want {
		t.Errorf("docx text = %q, want %q", got, want)
	}
	if got := mustExtract(t, "memo", data, extract.DOCX); got != want {
		t.Errorf("sniffed docx text = %q", got)
	}
}

func TestUnusableFiles(t *testing.T) {
	t.Parallel()
	pdf := extracttest.PDF([]string{"Some text on a page that will be cut short."})
	cases := []struct {
		what, name string
		data       []byte
		code       extract.Code
		says       string
	}{
		{"empty", "empty.txt", nil, extract.InvalidFile, "empty"},
		{"white space only", "blank.md", []byte(" \n\t\n"), extract.InvalidFile, "no text"},
		{"image by name", "photo.png", []byte("\x89PNG\r\n\x1a\n...."), extract.UnsupportedFile, "image"},
		{"legacy word", "old.doc", []byte("\xD0\xCF\x11\xE0 whatever"), extract.UnsupportedFile, ".doc"},
		{"binary, no name", "blob", []byte("\x7fELF\x02\x01\x01\x00\x00\x00binary"), extract.UnsupportedFile, "binary"},
		{"binary named .txt", "x.txt", []byte("abc\x00\x00\x01def"), extract.InvalidFile, "binary data"},
		{"pdf that is not", "fake.pdf", []byte("hello, I am text"), extract.InvalidFile, "not a PDF"},
		{"pdf garbage", "bad.pdf", []byte("%PDF-1.4\n1 0 obj garbage garbage\n"), extract.InvalidFile, "PDF is corrupt"},
		{"pdf truncated", "cut.pdf", pdf[:len(pdf)/2], extract.InvalidFile, "PDF"},
		{"pdf without text", "empty.pdf", extracttest.PDF([]string{}), extract.InvalidFile, "no text"},
		{"docx that is not", "fake.docx", []byte("plain words"), extract.InvalidFile, "not a Word document"},
		{"docx corrupt zip", "bad.docx", []byte("PK\x03\x04 not really a zip"), extract.InvalidFile, "corrupt"},
		{"docx without body", "hollow.docx", extracttest.Zip(map[string]string{"hello.txt": "hi"}), extract.InvalidFile, "no body"},
		{"docx bad xml", "badxml.docx", extracttest.Zip(map[string]string{"word/document.xml": "<w:document><w:body><w:p>"}), extract.InvalidFile, "malformed"},
		{"spreadsheet zip", "upload", extracttest.Zip(map[string]string{"xl/workbook.xml": "<workbook/>"}), extract.UnsupportedFile, "Excel"},
		{"plain zip", "upload", extracttest.Zip(map[string]string{"a.txt": "a"}), extract.UnsupportedFile, "zip"},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			wantCode(t, c.name, c.data, c.code, c.says)
		})
	}
}

func TestLimitAndWriterErrors(t *testing.T) {
	t.Parallel()
	data := []byte(strings.Repeat("lots of words ", 1000))
	var out bytes.Buffer
	_, err := extract.Extract(context.Background(), "big.txt", bytes.NewReader(data), int64(len(data)), &out, extract.Options{MaxText: 100})
	if code, _ := extract.CodeOf(err); code != extract.InvalidFile || !strings.Contains(err.Error(), "longer than 100 bytes") {
		t.Errorf("over the limit: %v", err)
	}

	// A failing writer is not the file's fault: the error comes back as it is, without a file code.
	disk := errors.New("disk full")
	for _, name := range []string{"a.txt", "a.json", "a.html", "a.pdf", "a.docx"} {
		body := map[string][]byte{
			"a.txt": data, "a.json": []byte(`{"k": "` + strings.Repeat("v", 100) + `"}`), "a.html": []byte("<p>" + string(data) + "</p>"),
			"a.pdf": extracttest.PDF([]string{"text"}), "a.docx": extracttest.DOCX(`<w:p><w:r><w:t>text</w:t></w:r></w:p>`),
		}[name]
		_, err := extract.Extract(context.Background(), name, bytes.NewReader(body), int64(len(body)), failingWriter{disk}, extract.Options{})
		if !errors.Is(err, disk) {
			t.Errorf("%s: error %v, want the writer's", name, err)
		}
		if _, ok := extract.CodeOf(err); ok {
			t.Errorf("%s: writer error classified as the file's: %v", name, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = extract.Extract(ctx, "a.txt", bytes.NewReader(data), int64(len(data)), &out, extract.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestDetect(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		head string
		want extract.Format
	}{
		{"a.PDF", "%PDF-1.7", extract.PDF},
		{"", "%PDF-1.7", extract.PDF},
		{"", "  <!DOCTYPE html><html>", extract.HTML},
		{"x.htm", "<p>hi", extract.HTML},
		{"", "PK\x03\x04rest", extract.DOCX},
		{"notes", "plain words", extract.Text},
		{"table.tsv", "a\tb", extract.CSV},
		{"weird.xyz", "text in an unknown extension", extract.Text},
	}
	for _, c := range cases {
		got, err := extract.Detect(c.name, []byte(c.head))
		if err != nil || got != c.want {
			t.Errorf("Detect(%q, %q) = %s, %v; want %s", c.name, c.head, got, err, c.want)
		}
	}
}
