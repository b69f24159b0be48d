package platform

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/chats"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/tasks"
	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/dirlock"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/julepapi"
	"github.com/contrailhq/contrail/internal/julepchat"
	"github.com/contrailhq/contrail/internal/julepdocs"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/projections"
)

// JulepParts are the pieces of Julep's API on a node: the commands, the docs index and its feed, the prompt maker.
type JulepParts struct {
	Agents   *commands.JulepAgents
	Users    *commands.JulepUsers
	Sessions *commands.JulepSessions
	Docs     *commands.JulepDocs
	// Tasks and Executions are Julep's tasks; Engine runs their executions.
	Tasks      *commands.JulepTasks
	Executions *commands.Executions
	Engine     *tasks.Engine
	Index      *julepdocs.Index
	Preparer   *julepchat.Preparer
	APICalls   *apicall.Client

	docIndex    *docindex.Index
	scratchLock *dirlock.Lock // nil when the index's scratch is a temporary directory
	chats       *chats.Handlers
	stop        context.CancelFunc
	done        chan struct{}
}

// assembleJulep wires Julep's commands, its docs index (fed from the log from here on) and its prompt maker.
func (p *Platform) assembleJulep(ctx context.Context) error {
	hosts, err := apicall.ParseHosts(p.Config.APICallHosts)
	if err != nil {
		return err
	}
	if err := natsx.EnsureBucket(ctx, p.JS, p.Layout, julepapi.RequestsBucketSpec()); err != nil {
		return err
	}
	dir, scratchLock := p.docIndexDir()
	ix, err := docindex.New(p.Embedder, docindex.Options{Dir: dir})
	if err != nil {
		scratchLock.Release()
		return err
	}
	j := &JulepParts{docIndex: ix, scratchLock: scratchLock, APICalls: apicall.NewClient(hosts, nil), done: make(chan struct{})}
	j.Index = julepdocs.New(ix, p.Store, p.JS, p.Logger.With("component", "julep-docs"))
	j.Users = commands.NewJulepUsers(eventstore.NewRepo[julep.UserState](p.Store, julep.UserAggregate, 0))
	j.Agents = commands.NewJulepAgents(eventstore.NewRepo[julep.AgentState](p.Store, julep.AgentAggregate, 0), j.Users, hosts)
	j.Docs = commands.NewJulepDocs(eventstore.NewRepo[julep.DocState](p.Store, julep.DocAggregate, 0), j.Agents, j.Users, j.Index)
	j.Sessions = commands.NewJulepSessions(p.Sessions, j.Agents, j.Users, hosts)
	j.Preparer = julepchat.NewPreparer(julepLookup{j, p.Views}, j.Index, p.Config.DefaultModel())
	j.Tasks = commands.NewJulepTasks(eventstore.NewRepo[julep.TaskState](p.Store, julep.TaskAggregate, 0), j.Agents, j.Users, hosts)
	j.Executions = commands.NewExecutions(eventstore.NewRepo[execution.State](p.Store, execution.Aggregate, 4096), j.Tasks)
	j.chats = chats.New(chats.Config{Sessions: p.Sessions, Preparer: j.Preparer, Lookup: julepLookup{j, p.Views}, Docs: j.Index,
		DocList: julepLookup{j, p.Views}, Models: p.agentModels, APICalls: j.APICalls, NC: p.NC, Names: p.Layout.Names,
		Logger: p.Logger.With("component", "julep-chat")})
	j.Engine = tasks.New(tasks.Config{Executions: j.Executions.Repo(), Agents: julepLookup{j, p.Views}, System: j.chats,
		Models: p.agentModels, DefaultModel: p.Config.DefaultModel(), APICalls: j.APICalls, JS: p.JS, Names: p.Layout.Names,
		AckWait: p.Config.HandlerAckWait, Logger: p.Logger.With("component", "task-engine")})
	feed, cancel := context.WithCancel(context.Background())
	j.stop = cancel
	go func() {
		defer close(j.done)
		j.Index.Run(feed)
	}()
	p.Julep = j
	return nil
}

// stopJulep stops the docs index's feed and drops the index.
func (p *Platform) stopJulep() {
	if p.Julep == nil || p.Julep.stop == nil {
		return
	}
	p.stopVectorStores() // it shares the search index closed below
	p.Julep.stop()
	<-p.Julep.done
	if err := p.Julep.docIndex.Close(); err != nil {
		p.Logger.Warn("close the docs index", "err", err)
	}
	p.Julep.scratchLock.Release()
}

// docIndexDir is where the docs index keeps its scratch files. The index wipes them when it starts, so they must be
// this process's alone: the data dir is when the embedded server holds it; nodes on an external NATS may share one,
// so the index takes a directory of its own under it, locked, and a temporary directory only when another node holds
// that. (A temporary directory outlives a node that is killed; the locked one is wiped by the next start.)
func (p *Platform) docIndexDir() (string, *dirlock.Lock) {
	if p.NS != nil {
		return p.Config.DataDir, nil
	}
	dir := filepath.Join(p.Config.DataDir, "docindex")
	lock, err := dirlock.Acquire(dir)
	if err != nil {
		p.Logger.Info("the docs index's scratch directory is another node's; using a temporary one", "dir", dir, "err", err)
		return "", nil
	}
	return dir, lock
}

// julepFace is the /julep face.
func (p *Platform) julepFace() httpapi.Face {
	j := p.Julep
	models := []string{llm.ProviderOffline}
	if def := p.Config.DefaultModel(); def != llm.ProviderOffline {
		models = append(models, def)
	}
	kv, err := p.JS.KeyValue(context.Background(), p.Layout.Names.Bucket(julepapi.RequestsBucket))
	if err != nil {
		// Provisioned in assembleJulep a moment ago; its absence is a broken deployment.
		panic(fmt.Sprintf("open %s: %v", julepapi.RequestsBucket, err))
	}
	return julepapi.New(julepapi.Deps{Agents: j.Agents, Users: j.Users, Sessions: j.Sessions, Docs: j.Docs,
		Tasks: j.Tasks, Executions: j.Executions,
		Views: p.Views, Preparer: j.Preparer, Requests: kv, NC: p.NC, JS: p.JS, Store: p.Store, Names: p.Layout.Names,
		Models: models, Logger: p.Logger.With("face", "julep")})
}

// julepHandlers are the handlers that answer Julep chats, summarize their history and run task executions.
func (p *Platform) julepHandlers() []runtime.Handler {
	j := p.Julep
	return []runtime.Handler{j.chats.Turns(), j.chats.Summarizer(), j.Engine.Stepper(), j.Engine.Effects()}
}

// DueTimers lists the task sleeps due by a time, from the task_timers read model.
func (l julepLookup) DueTimers(ctx context.Context, by time.Time) ([]tasks.Due, error) {
	var out []tasks.Due
	err := l.views.List(ctx, projections.TaskTimersModel, "*", func(key string, raw json.RawMessage) error {
		var timers projections.TaskTimers
		if err := json.Unmarshal(raw, &timers); err != nil {
			return fmt.Errorf("decode the timers of %s: %w", key, err)
		}
		for k, until := range timers {
			if !until.After(by) {
				out = append(out, tasks.Due{Execution: key, Account: events.JulepAccountOf(key), Key: k})
			}
		}
		return nil
	})
	return out, err
}

// julepLookup reads an account's Julep agents, users and docs for the prompt maker and the chat handler.
type julepLookup struct {
	j     *JulepParts
	views *projections.Runner
}

func (l julepLookup) JulepAgent(ctx context.Context, account, id string) (julep.Agent, error) {
	return l.j.Agents.Get(ctx, auth.Principal{AccountID: account}, id)
}

func (l julepLookup) JulepUser(ctx context.Context, account, id string) (julep.User, error) {
	return l.j.Users.Get(ctx, auth.Principal{AccountID: account}, id)
}

// ListDocs lists an owner's docs, newest first.
func (l julepLookup) ListDocs(ctx context.Context, account string, owner events.DocOwner, limit int) ([]julep.Doc, error) {
	docs, err := projections.ListAll[julep.Doc](ctx, l.views, projections.JulepDocsModel, projections.JulepDocsFilter(account, owner))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(docs, func(a, b julep.Doc) int { return cmp.Compare(b.Created.UnixNano(), a.Created.UnixNano()) })
	return docs[:min(limit, len(docs))], nil
}
