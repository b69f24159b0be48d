package openaiapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/projections"
)

// The vector store objects, as OpenAI shows them.
type (
	vectorStoreObject struct {
		ID           string                    `json:"id"`
		Object       string                    `json:"object"`
		CreatedAt    int64                     `json:"created_at"`
		Name         string                    `json:"name"`
		UsageBytes   int64                     `json:"usage_bytes"`
		FileCounts   vectorstore.Counts        `json:"file_counts"`
		Status       string                    `json:"status"`
		ExpiresAfter *events.VectorStoreExpiry `json:"expires_after"`
		ExpiresAt    *int64                    `json:"expires_at"`
		LastActiveAt int64                     `json:"last_active_at"`
		Metadata     map[string]string         `json:"metadata"`
	}
	vectorStoreFileObject struct {
		ID               string                       `json:"id"`
		Object           string                       `json:"object"`
		UsageBytes       int64                        `json:"usage_bytes"`
		CreatedAt        int64                        `json:"created_at"`
		VectorStoreID    string                       `json:"vector_store_id"`
		Status           string                       `json:"status"`
		LastError        *events.VectorStoreFileError `json:"last_error"`
		ChunkingStrategy chunkingObject               `json:"chunking_strategy"`
		Attributes       map[string]any               `json:"attributes"`
	}
	chunkingObject struct {
		Type   string `json:"type"`
		Static struct {
			MaxChunkSizeTokens int `json:"max_chunk_size_tokens"`
			ChunkOverlapTokens int `json:"chunk_overlap_tokens"`
		} `json:"static"`
	}
	fileBatchObject struct {
		ID            string             `json:"id"`
		Object        string             `json:"object"`
		CreatedAt     int64              `json:"created_at"`
		VectorStoreID string             `json:"vector_store_id"`
		Status        string             `json:"status"`
		FileCounts    vectorstore.Counts `json:"file_counts"`
	}
	searchResult struct {
		FileID     string          `json:"file_id"`
		Filename   string          `json:"filename"`
		Score      float64         `json:"score"`
		Attributes map[string]any  `json:"attributes"`
		Content    []contentObject `json:"content"`
	}
	contentObject struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	searchPage struct {
		Object      string         `json:"object"`
		SearchQuery []string       `json:"search_query"`
		Data        []searchResult `json:"data"`
		HasMore     bool           `json:"has_more"`
		NextPage    *string        `json:"next_page"`
	}
	contentPage struct {
		Object   string          `json:"object"`
		Data     []contentObject `json:"data"`
		HasMore  bool            `json:"has_more"`
		NextPage *string         `json:"next_page"`
	}
)

func storeObject(s vectorstore.State, now time.Time) vectorStoreObject {
	o := vectorStoreObject{ID: s.ID, Object: "vector_store", CreatedAt: s.Created.Unix(), Name: s.Name, UsageBytes: s.UsageBytes,
		FileCounts: s.Counts, Status: s.Status(now), ExpiresAfter: s.ExpiresAfter, LastActiveAt: s.LastActive.Unix(),
		Metadata: s.Metadata}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	if at := s.ExpiresAt(); at != nil {
		u := at.Unix()
		o.ExpiresAt = &u
	}
	return o
}

func storeFileObject(storeID string, f *vectorstore.File) vectorStoreFileObject {
	o := vectorStoreFileObject{ID: f.FileID, Object: "vector_store.file", UsageBytes: f.UsageBytes, CreatedAt: f.Added.Unix(),
		VectorStoreID: storeID, Status: f.Status, LastError: f.LastError, Attributes: f.Attributes}
	o.ChunkingStrategy.Type = "static"
	o.ChunkingStrategy.Static.MaxChunkSizeTokens = f.Chunking.MaxTokens
	o.ChunkingStrategy.Static.ChunkOverlapTokens = f.Chunking.OverlapTokens
	if o.Attributes == nil {
		o.Attributes = map[string]any{}
	}
	return o
}

func batchObject(v vectorstore.BatchView) fileBatchObject {
	return fileBatchObject{ID: v.ID, Object: "vector_store.files_batch", CreatedAt: v.Created.Unix(), VectorStoreID: v.StoreID,
		Status: v.Status, FileCounts: v.Counts}
}

// chunkingField reads a chunking_strategy: {"type": "auto"} or {"type": "static", "static": {...}}.
func chunkingField(in fields) (*events.Chunking, error) {
	var raw struct {
		Type   string `json:"type"`
		Static *struct {
			MaxTokens     *int `json:"max_chunk_size_tokens"`
			OverlapTokens *int `json:"chunk_overlap_tokens"`
		} `json:"static"`
	}
	ok, err := get(in, "chunking_strategy", &raw)
	if !ok || err != nil {
		return nil, err
	}
	c := &events.Chunking{Type: raw.Type}
	if raw.Type == "static" {
		if raw.Static == nil || raw.Static.MaxTokens == nil || raw.Static.OverlapTokens == nil {
			return nil, errs.InvalidField("chunking_strategy.static",
				"a static chunking_strategy needs static.max_chunk_size_tokens and static.chunk_overlap_tokens")
		}
		c.MaxTokens, c.OverlapTokens = *raw.Static.MaxTokens, *raw.Static.OverlapTokens
	}
	return c, nil
}

func expiryField(in fields) (*events.VectorStoreExpiry, error) {
	var e events.VectorStoreExpiry
	ok, err := get(in, "expires_after", &e)
	if !ok || err != nil {
		return nil, err
	}
	return &e, nil
}

func attributesField(in fields, name string) (map[string]any, error) {
	var m map[string]any
	_, err := get(in, name, &m)
	return m, err
}

func (f *Face) createVectorStore(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	var req commands.NewVectorStore
	if req.Name, err = in.str("name"); err == nil {
		req.Metadata, err = in.metadata("metadata")
	}
	if err == nil {
		_, err = get(in, "file_ids", &req.FileIDs)
	}
	if err == nil {
		req.ExpiresAfter, err = expiryField(in)
	}
	if err == nil {
		req.Chunking, err = chunkingField(in)
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, res, err := f.d.VectorStores.Create(r.Context(), principal(r), req)
	// Past the wait the store is answered as made: it is (a store is read from the log), and a list meanwhile says
	// its model is behind rather than leave it out.
	if err := f.shownOrDone(r, res, err, projections.VectorStores{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, storeObject(s, time.Now()))
}

func (f *Face) getVectorStore(w http.ResponseWriter, r *http.Request) {
	s, err := f.d.VectorStores.Get(r.Context(), principal(r), chi.URLParam(r, "vector_store_id"))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, storeObject(s, time.Now()))
}

func (f *Face) modifyVectorStore(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	name, err := in.optStr("name")
	var metadata map[string]string
	if err == nil {
		metadata, err = in.metadata("metadata")
	}
	var expiry **events.VectorStoreExpiry
	if err == nil && in.has("expires_after") {
		var e *events.VectorStoreExpiry
		e, err = expiryField(in)
		expiry = &e // null takes the expiry away
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err := f.d.VectorStores.Modify(r.Context(), principal(r), chi.URLParam(r, "vector_store_id"), name, metadata, expiry)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, storeObject(s, time.Now()))
}

func (f *Face) deleteVectorStore(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "vector_store_id")
	res, err := f.d.VectorStores.Delete(r.Context(), principal(r), id)
	if err := f.shownOrDone(r, res, err, projections.VectorStores{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: id, Object: "vector_store.deleted", Deleted: true})
}

// listVectorStores pages the caller's stores from the vector_stores read model (which holds their IDs in creation
// order) and reads each store of the page.
func (f *Face) listVectorStores(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := f.d.Views.ListCaughtUp(r.Context(), projections.VectorStores{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	docs, err := projections.ListAll[projections.Listed[string]](r.Context(), f.d.Views, projections.VectorStoresModel, principal(r).AccountID+".*")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items := make([]listed[string], 0, len(docs))
	for _, d := range docs {
		items = append(items, listed[string]{id: d.Obj, seq: d.Seq, obj: d.Obj})
	}
	ids := paginate(items, p)
	out := page[vectorStoreObject]{Object: "list", Data: make([]vectorStoreObject, 0, len(ids.Data)), FirstID: ids.FirstID,
		LastID: ids.LastID, HasMore: ids.HasMore}
	now := time.Now()
	for _, id := range ids.Data {
		s, err := f.d.VectorStores.Get(r.Context(), principal(r), id)
		if errs.CodeOf(err) == errs.NotFound {
			continue // deleted since the read model was read
		}
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		out.Data = append(out.Data, storeObject(s, now))
	}
	writeJSON(w, out)
}

func (f *Face) addVectorStoreFile(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	fileID, err := in.str("file_id")
	var attrs map[string]any
	if err == nil {
		attrs, err = attributesField(in, "attributes")
	}
	var chunking *events.Chunking
	if err == nil {
		chunking, err = chunkingField(in)
	}
	if err == nil && fileID == "" {
		err = errs.Missing("file_id")
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err := f.d.VectorStoreFiles.AddFile(r.Context(), principal(r), chi.URLParam(r, "vector_store_id"), fileID, attrs, chunking)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, storeFileObject(s.ID, s.Files[fileID]))
}

// storeFile reads one file of one of the caller's stores.
func (f *Face) storeFile(r *http.Request) (vectorstore.State, *vectorstore.File, error) {
	s, err := f.d.VectorStores.Get(r.Context(), principal(r), chi.URLParam(r, "vector_store_id"))
	if err != nil {
		return s, nil, err
	}
	id := chi.URLParam(r, "file_id")
	file := s.Files[id]
	if file == nil {
		e := errs.E(errs.NotFound, "No file found with id '%s' in vector store '%s'.", id, s.ID)
		e.Field = "file_id"
		return s, nil, e
	}
	return s, file, nil
}

func (f *Face) getVectorStoreFile(w http.ResponseWriter, r *http.Request) {
	pollAfter(w)
	s, file, err := f.storeFile(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, storeFileObject(s.ID, file))
}

func (f *Face) updateVectorStoreFile(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !in.has("attributes") {
		f.WriteError(w, r, errs.Missing("attributes"))
		return
	}
	attrs, err := attributesField(in, "attributes")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if _, _, err := f.storeFile(r); err != nil {
		f.WriteError(w, r, err)
		return
	}
	id := chi.URLParam(r, "file_id")
	s, err := f.d.VectorStoreFiles.UpdateFile(r.Context(), principal(r), chi.URLParam(r, "vector_store_id"), id, attrs)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, storeFileObject(s.ID, s.Files[id]))
}

func (f *Face) deleteVectorStoreFile(w http.ResponseWriter, r *http.Request) {
	s, file, err := f.storeFile(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := f.d.VectorStoreFiles.RemoveFile(r.Context(), principal(r), s.ID, file.FileID); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: file.FileID, Object: "vector_store.file.deleted", Deleted: true})
}

// listStoreFiles pages a store's files (those of one batch when batch is set), in the order they were added,
// filtered by status when the request asks.
func (f *Face) listStoreFiles(w http.ResponseWriter, r *http.Request, s vectorstore.State, batch string) {
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	status := r.URL.Query().Get("filter")
	switch status {
	case "", vectorstore.StatusInProgress, vectorstore.StatusCompleted, vectorstore.StatusFailed, vectorstore.StatusCancelled:
	default:
		f.WriteError(w, r, errs.InvalidField("filter", "Invalid value for 'filter': expected one of 'in_progress', 'completed', 'failed' or 'cancelled'."))
		return
	}
	items := make([]listed[vectorStoreFileObject], 0, len(s.Order))
	for i, id := range s.Order {
		file := s.Files[id]
		if (batch != "" && file.BatchID != batch) || (status != "" && file.Status != status) {
			continue
		}
		items = append(items, listed[vectorStoreFileObject]{id: id, seq: uint64(i), obj: storeFileObject(s.ID, file)})
	}
	writeJSON(w, paginate(items, p))
}

func (f *Face) listVectorStoreFiles(w http.ResponseWriter, r *http.Request) {
	s, err := f.d.VectorStores.Get(r.Context(), principal(r), chi.URLParam(r, "vector_store_id"))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.listStoreFiles(w, r, s, "")
}

func (f *Face) vectorStoreFileContent(w http.ResponseWriter, r *http.Request) {
	s, file, err := f.storeFile(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	texts, err := f.d.VectorStoreFiles.Content(r.Context(), principal(r), s.ID, file.FileID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	out := contentPage{Object: "vector_store.file_content.page", Data: make([]contentObject, 0, len(texts))}
	for _, t := range texts {
		out.Data = append(out.Data, contentObject{Type: "text", Text: t})
	}
	writeJSON(w, out)
}

func (f *Face) createFileBatch(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	var fileIDs []string
	var files []struct {
		FileID     string         `json:"file_id"`
		Attributes map[string]any `json:"attributes"`
	}
	_, err = get(in, "file_ids", &fileIDs)
	if err == nil {
		_, err = get(in, "files", &files)
	}
	var attrs map[string]any
	if err == nil {
		attrs, err = attributesField(in, "attributes")
	}
	var chunking *events.Chunking
	if err == nil {
		chunking, err = chunkingField(in)
	}
	if err == nil && len(fileIDs) > 0 && len(files) > 0 {
		err = errs.InvalidField("files", "give either file_ids or files, not both")
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	batch := make([]commands.BatchFile, 0, len(fileIDs)+len(files))
	for _, id := range fileIDs {
		batch = append(batch, commands.BatchFile{FileID: id, Attributes: attrs})
	}
	for _, file := range files {
		batch = append(batch, commands.BatchFile{FileID: file.FileID, Attributes: file.Attributes})
	}
	s, id, err := f.d.VectorStoreFiles.CreateBatch(r.Context(), principal(r), chi.URLParam(r, "vector_store_id"), batch, chunking)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	v, _ := s.BatchView(id)
	writeJSON(w, batchObject(v))
}

// batch reads one batch of one of the caller's stores.
func (f *Face) batch(r *http.Request) (vectorstore.State, vectorstore.BatchView, error) {
	s, err := f.d.VectorStores.Get(r.Context(), principal(r), chi.URLParam(r, "vector_store_id"))
	if err != nil {
		return s, vectorstore.BatchView{}, err
	}
	id := chi.URLParam(r, "batch_id")
	v, ok := s.BatchView(id)
	if !ok {
		e := errs.E(errs.NotFound, "No file batch found with id '%s' in vector store '%s'.", id, s.ID)
		e.Field = "batch_id"
		return s, v, e
	}
	return s, v, nil
}

func (f *Face) getFileBatch(w http.ResponseWriter, r *http.Request) {
	pollAfter(w)
	_, v, err := f.batch(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, batchObject(v))
}

func (f *Face) cancelFileBatch(w http.ResponseWriter, r *http.Request) {
	s, v, err := f.batch(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err = f.d.VectorStoreFiles.CancelBatch(r.Context(), principal(r), s.ID, v.ID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	v, _ = s.BatchView(v.ID)
	writeJSON(w, batchObject(v))
}

func (f *Face) listBatchFiles(w http.ResponseWriter, r *http.Request) {
	s, v, err := f.batch(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.listStoreFiles(w, r, s, v.ID)
}

// searchVectorStore answers POST /vector_stores/{id}/search: query (a string or strings), max_num_results,
// filters, ranking_options.score_threshold. rewrite_query is accepted and not done: the query is searched as sent,
// and search_query says so.
func (f *Face) searchVectorStore(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	req, err := searchRequest(in)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	hits, err := f.d.VectorStores.Search(r.Context(), principal(r), chi.URLParam(r, "vector_store_id"), req)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	out := searchPage{Object: "vector_store.search_results.page", SearchQuery: req.Queries, Data: make([]searchResult, 0, len(hits))}
	for _, h := range hits {
		attrs := h.Attributes
		if attrs == nil {
			attrs = map[string]any{}
		}
		out.Data = append(out.Data, searchResult{FileID: h.FileID, Filename: h.Filename, Score: h.Score, Attributes: attrs,
			Content: []contentObject{{Type: "text", Text: h.Text}}})
	}
	writeJSON(w, out)
}

func searchRequest(in fields) (commands.SearchRequest, error) {
	var req commands.SearchRequest
	raw, ok := in.m["query"]
	if !ok || in.null("query") {
		return req, errs.Missing("query")
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		req.Queries = []string{one}
	} else if err := json.Unmarshal(raw, &req.Queries); err != nil {
		return req, errs.InvalidField("query", "Invalid type for 'query': expected a string or an array of strings.")
	}
	if n, err := in.optInt("max_num_results"); err != nil {
		return req, err
	} else if n != nil {
		req.Limit = *n
		if req.Limit < 1 {
			return req, errs.InvalidField("max_num_results", "max_num_results must be between 1 and 50, got %d", req.Limit)
		}
	}
	if raw, err := in.raw("filters", false); err != nil {
		return req, err
	} else if raw != nil {
		if req.Filter, err = docindex.ParseFilter(raw, "filters"); err != nil {
			return req, err
		}
	}
	var ranking rankingOptions
	if _, err := get(in, "ranking_options", &ranking); err != nil {
		return req, err
	}
	if err := ranking.check("ranking_options"); err != nil {
		return req, err
	}
	if t := ranking.ScoreThreshold; t != nil {
		req.MinScore = *t
	}
	for i, q := range req.Queries {
		req.Queries[i] = strings.TrimSpace(q)
	}
	return req, nil
}

// rankingOptions is a file search's ranking_options, as a vector store search and a response's file_search tool
// take them.
type rankingOptions struct {
	Ranker         string   `json:"ranker"`
	ScoreThreshold *float64 `json:"score_threshold"`
}

// check refuses a ranker the API does not define and a threshold outside 0..1, naming the field under at.
func (o rankingOptions) check(at string) error {
	switch o.Ranker {
	case "", "auto", "default-2024-11-15", "none":
	default:
		return errs.InvalidField(at+".ranker", "Invalid value for '%s.ranker': expected 'auto', 'default-2024-11-15' or 'none'.", at)
	}
	if t := o.ScoreThreshold; t != nil && (*t < 0 || *t > 1) {
		return errs.InvalidField(at+".score_threshold", "Invalid '%s.score_threshold': expected a value between 0 and 1.", at)
	}
	return nil
}
