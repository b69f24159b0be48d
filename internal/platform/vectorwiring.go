package platform

import (
	"context"
	"os"
	"path/filepath"

	"github.com/contrailhq/contrail/domain/file"
	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/vectorstores"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/vsindex"
)

// VectorParts are the Assistants API's vector stores on a node: the commands, the index (sharing the Julep docs'
// search index, under collections of its own) and its feed from the log, the handler that processes files.
type VectorParts struct {
	Commands *commands.VectorStores
	Index    *vsindex.Index
	handler  *vectorstores.Handler
	stop     context.CancelFunc
	done     chan struct{}
}

// assembleVectorStores wires the vector stores; it comes after assembleJulep, whose search index it shares.
func (p *Platform) assembleVectorStores() error {
	tmp := os.TempDir()
	if p.Config.DataDir != "" {
		tmp = filepath.Join(p.Config.DataDir, "tmp")
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return err
		}
	}
	repo := events.NewRepo[vectorstore.State](p.Store, vectorstore.Aggregate, 1024)
	v := &VectorParts{Index: vsindex.New(p.Julep.docIndex, p.Store, p.Blobs, p.JS, tmp, p.Logger.With("component", "vector-stores")),
		done: make(chan struct{})}
	v.Commands = commands.NewVectorStores(repo, events.NewRepo[file.State](p.Store, "file", 0), v.Index, p.Views)
	v.handler = vectorstores.New(repo, v.Index, 2)
	feed, cancel := context.WithCancel(context.Background())
	v.stop = cancel
	go func() {
		defer close(v.done)
		v.Index.Run(feed)
	}()
	p.Vectors = v
	return nil
}

// stopVectorStores stops the index's feed (before the search index it shares closes).
func (p *Platform) stopVectorStores() {
	if p.Vectors == nil || p.Vectors.stop == nil {
		return
	}
	p.Vectors.stop()
	<-p.Vectors.done
}

// vectorHandlers are the handlers of vector stores: the processing of files added.
func (p *Platform) vectorHandlers() []runtime.Handler {
	return []runtime.Handler{p.Vectors.handler.Files()}
}
