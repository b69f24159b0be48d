package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/extract/extracttest"
)

// FilesOptions sizes the vector store benchmark.
type FilesOptions struct {
	// Dir is an empty directory for the node's data.
	Dir string
	// ModelsDir holds the embedder's weights (the neural use-lite when its weights are there, else the n-gram
	// embedder the node falls back to).
	ModelsDir string
	// PDFs is how many 10-page PDFs are made searchable one after another.
	PDFs int
	// Chunks is how many chunks the search store holds; Searches how many searches are timed.
	Chunks   int
	Searches int
	// BigMB, when set, is the size of a text file whose processing is watched for the server's peak memory.
	BigMB int
}

// Files measures vector stores through the /v1 face of an in-process node: a 10-page PDF from upload to
// searchable, and searches of a store of many chunks. Baselines, in the same run: putting the PDF's bytes into a
// raw JetStream object store, and one raw direct get.
func Files(ctx context.Context, o FilesOptions, progress func(string)) (Report, error) {
	if o.PDFs == 0 {
		o.PDFs = 20
	}
	if o.Chunks == 0 {
		o.Chunks = 10000
	}
	if o.Searches == 0 {
		o.Searches = 200
	}
	step := func(s string) {
		if progress != nil {
			progress(s)
		}
	}
	node, err := startNodeWith(ctx, o.Dir, func(c *config.Config) {
		if o.ModelsDir != "" {
			c.ModelsPath = o.ModelsDir
		}
	})
	if err != nil {
		return Report{}, err
	}
	defer node.stop()
	embedder := node.p.Embedder.Name()
	rep := Report{Title: fmt.Sprintf("contrail bench files: vector stores on one in-process node, over HTTP; embedder %s", embedder)}

	pdf := tenPagePDF()
	step(fmt.Sprintf("%d ten-page PDFs (%d bytes each), upload -> searchable", o.PDFs, len(pdf)))
	var ready []time.Duration
	store, err := node.post(ctx, "/v1/vector_stores", `{"name":"pdfs"}`)
	if err != nil {
		return rep, err
	}
	for i := 0; i < o.PDFs+2; i++ {
		start := time.Now()
		file, err := node.upload(ctx, fmt.Sprintf("report-%d.pdf", i), pdf)
		if err != nil {
			return rep, err
		}
		if _, err := node.post(ctx, "/v1/vector_stores/"+store+"/files", fmt.Sprintf(`{"file_id":%q}`, file)); err != nil {
			return rep, err
		}
		if err := node.waitFileProcessed(ctx, store, file); err != nil {
			return rep, err
		}
		if i >= 2 { // two to warm up
			ready = append(ready, time.Since(start))
		}
	}
	rawPut, err := rawObjectPuts(ctx, node, pdf, 20)
	if err != nil {
		return rep, err
	}
	p50 := Percentile(ready, 50)
	rep.Figures = append(rep.Figures,
		Figure{Name: "10-page PDF, upload -> searchable, p50", Value: ms(p50), Unit: "ms", Baseline: ms(Percentile(rawPut, 50)),
			Ratio: float64(Percentile(rawPut, 50)) / float64(p50),
			Note:  "multipart upload, add to a store, extract, chunk (800/400 tokens), embed, store the chunks, record, index; polled every 5 ms. Baseline: putting the same bytes into a raw JetStream object store"},
		Figure{Name: "10-page PDF, upload -> searchable, p99", Value: ms(Percentile(ready, 99)), Unit: "ms"},
	)

	step(fmt.Sprintf("a store of %d chunks", o.Chunks))
	big, err := node.post(ctx, "/v1/vector_stores", `{"name":"big","chunking_strategy":{"type":"static","static":{"max_chunk_size_tokens":100,"chunk_overlap_tokens":0}}}`)
	if err != nil {
		return rep, err
	}
	const perFile = 100
	files := (o.Chunks + perFile - 1) / perFile
	filled := time.Now()
	var ids []string
	for i := 0; i < files; i++ {
		file, err := node.upload(ctx, fmt.Sprintf("notes-%d.txt", i), []byte(synthText(i, perFile)))
		if err != nil {
			return rep, err
		}
		ids = append(ids, file)
	}
	body, _ := json.Marshal(map[string]any{"file_ids": ids})
	if _, err := node.post(ctx, "/v1/vector_stores/"+big+"/file_batches", string(body)); err != nil {
		return rep, err
	}
	for _, id := range ids {
		if err := node.waitFileProcessed(ctx, big, id); err != nil {
			return rep, err
		}
	}
	fillTime := time.Since(filled)
	step(fmt.Sprintf("%d searches", o.Searches))
	var searches []time.Duration
	for i := 0; i < o.Searches+10; i++ {
		q := fmt.Sprintf(`{"query":"where is the %s kept in section %d","max_num_results":10}`, words[i%len(words)], i%perFile)
		start := time.Now()
		resp, err := node.request(ctx, "/v1/vector_stores/"+big+"/search", q)
		if err != nil {
			return rep, err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(`"file_id"`)) {
			return rep, fmt.Errorf("search: %d %.300s", resp.StatusCode, raw)
		}
		if i >= 10 {
			searches = append(searches, time.Since(start))
		}
	}
	rawGet, err := rawDirectGets(ctx, node, 200)
	if err != nil {
		return rep, err
	}
	s50 := Percentile(searches, 50)
	rep.Figures = append(rep.Figures,
		Figure{Name: fmt.Sprintf("%d chunks (%d files) added in a batch -> all searchable", files*perFile, files), Value: fillTime.Seconds(), Unit: "s"},
		Figure{Name: fmt.Sprintf("search of %d chunks (hybrid, 10 results), p50", files*perFile), Value: ms(s50), Unit: "ms",
			Baseline: ms(Percentile(rawGet, 50)), Ratio: float64(Percentile(rawGet, 50)) / float64(s50),
			Note: "POST /v1/vector_stores/{id}/search over HTTP: a fresh read of the store, the index caught up, text and vector search merged. Baseline: one raw JetStream direct get"},
		Figure{Name: fmt.Sprintf("search of %d chunks (hybrid, 10 results), p99", files*perFile), Value: ms(Percentile(searches, 99)), Unit: "ms"},
	)
	if o.BigMB > 0 {
		step(fmt.Sprintf("a %d MB text file, the process's peak memory while it is processed", o.BigMB))
		figs, err := node.bigFile(ctx, o.BigMB)
		if err != nil {
			return rep, err
		}
		rep.Figures = append(rep.Figures, figs...)
	}
	return rep, nil
}

// bigFile uploads a text file of mb megabytes to a store and samples the process's memory until it is processed.
func (b *benchNode) bigFile(ctx context.Context, mb int) ([]Figure, error) {
	var text bytes.Buffer
	for i := 0; text.Len() < mb<<20; i++ {
		text.WriteString(synthText(i, 10))
	}
	data := text.Bytes()[:mb<<20]
	store, err := b.post(ctx, "/v1/vector_stores", `{"name":"big-file"}`)
	if err != nil {
		return nil, err
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := sampleMemory(20 * time.Millisecond)
	start := time.Now()
	file, err := b.upload(ctx, "big.txt", data)
	if err == nil {
		_, err = b.post(ctx, "/v1/vector_stores/"+store+"/files", fmt.Sprintf(`{"file_id":%q}`, file))
	}
	if err == nil {
		err = b.waitFileProcessed(ctx, store, file)
	}
	took := time.Since(start)
	heap, sys := peak()
	if err != nil {
		return nil, err
	}
	return []Figure{
		{Name: fmt.Sprintf("%d MB text file, upload -> searchable", mb), Value: took.Seconds(), Unit: "s"},
		{Name: fmt.Sprintf("%d MB text file, peak Go heap in use while processed", mb), Value: float64(heap) / (1 << 20), Unit: "MiB",
			Note: fmt.Sprintf("sampled every 20 ms; %.1f MiB before the upload (the whole in-process node: NATS, read models, the index)", float64(before.HeapInuse)/(1<<20))},
		{Name: fmt.Sprintf("%d MB text file, peak memory from the OS while processed", mb), Value: float64(sys) / (1 << 20), Unit: "MiB",
			Note: fmt.Sprintf("runtime.MemStats.Sys; %.1f MiB before", float64(before.Sys)/(1<<20))},
	}, nil
}

// sampleMemory samples the heap in use and the memory obtained from the OS every interval until the returned
// function is called, which gives the peaks.
func sampleMemory(interval time.Duration) func() (heap, sys uint64) {
	stop, done := make(chan struct{}), make(chan struct{})
	var heap, sys uint64
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			heap, sys = max(heap, m.HeapInuse), max(sys, m.Sys)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(stop)
		<-done
		return heap, sys
	}
}

// tenPagePDF is a report of ten pages, each on a subject of its own.
func tenPagePDF() []byte {
	pages := make([][]string, 10)
	for p := range pages {
		lines := []string{fmt.Sprintf("Chapter %d: the %s", p+1, words[p])}
		for l := 0; l < 40; l++ {
			lines = append(lines, fmt.Sprintf("Line %d of chapter %d says where the %s is kept and how it is looked after in season %d.",
				l, p+1, words[(p+l)%len(words)], l%4))
		}
		pages[p] = lines
	}
	return extracttest.PDF(pages...)
}

var words = []string{"lantern", "compass", "ledger", "kettle", "anchor", "telescope", "harness", "barometer", "sextant", "lockbox",
	"spindle", "crucible"}

// synthText is a text of about n chunks of 100 tokens.
func synthText(file, n int) string {
	var b strings.Builder
	for s := 0; s < n; s++ {
		fmt.Fprintf(&b, "Section %d of file %d. ", s, file)
		for k := 0; k < 6; k++ {
			fmt.Fprintf(&b, "The %s of room %d is kept on shelf %d next to the %s. ", words[(file+s+k)%len(words)], s, k,
				words[(file*7+s+k)%len(words)])
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

// upload uploads a file for assistants and returns its ID.
func (b *benchNode) upload(ctx context.Context, name string, data []byte) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("purpose", "assistants")
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		return "", err
	}
	_, _ = fw.Write(data)
	if err := mw.Close(); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url+"/v1/files", &body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+b.key)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := b.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var f struct {
		ID string `json:"id"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &f) != nil {
		return "", fmt.Errorf("upload %s: %d %.300s", name, resp.StatusCode, raw)
	}
	return f.ID, nil
}

// waitFileProcessed polls a store's file until it is no longer in progress; anything but completed is an error.
func (b *benchNode) waitFileProcessed(ctx context.Context, store, file string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.url+"/v1/vector_stores/"+store+"/files/"+file, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+b.key)
		resp, err := b.client.Do(req)
		if err != nil {
			return err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var f struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(raw, &f); err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("poll file %s: %d %.300s", file, resp.StatusCode, raw)
		}
		switch f.Status {
		case "completed":
			return nil
		case "in_progress":
		default:
			return fmt.Errorf("file %s ended %s: %.300s", file, f.Status, raw)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// rawObjectPuts puts data into a raw JetStream object store n times.
func rawObjectPuts(ctx context.Context, b *benchNode, data []byte, n int) ([]time.Duration, error) {
	os, err := b.p.JS.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "bench_raw_objects"})
	if err != nil {
		return nil, fmt.Errorf("raw object store: %w", err)
	}
	defer func() { _ = b.p.JS.DeleteObjectStore(context.WithoutCancel(ctx), "bench_raw_objects") }()
	var out []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		if _, err := os.PutBytes(ctx, fmt.Sprintf("o%d", i), data); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// rawDirectGets times n direct gets of the events stream's last message.
func rawDirectGets(ctx context.Context, b *benchNode, n int) ([]time.Duration, error) {
	stream, err := b.p.JS.Stream(ctx, b.p.Layout.Names.EventsStream())
	if err != nil {
		return nil, err
	}
	var out []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		if _, err := stream.GetLastMsgForSubject(ctx, b.p.Layout.Names.TypeFilter("vstore.*")); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}
