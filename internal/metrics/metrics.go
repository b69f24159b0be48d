// Package metrics holds the Prometheus collectors every part of Contrail reports to. One Metrics is made in main
// and passed down; nothing registers itself globally.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the platform's collectors.
type Metrics struct {
	Appends         *prometheus.CounterVec   // by aggregate
	AppendConflicts *prometheus.CounterVec   // by aggregate
	AppendSeconds   prometheus.Histogram     // one Append call
	AppendRetries   *prometheus.CounterVec   // publishes sent again through a leader change, by aggregate
	StaleReads      *prometheus.CounterVec   // loads a lagging replica answered, settled by the leader, by aggregate
	ProjectionStall *prometheus.CounterVec   // readers recreated because they stopped while the log moved, by projection
	HandlerAttempts *prometheus.CounterVec   // by handler
	HandlerFailures *prometheus.CounterVec   // by handler
	HandlerPoisoned *prometheus.CounterVec   // by handler
	HandlerSeconds  *prometheus.HistogramVec // by handler
	ProjectionLag   *prometheus.GaugeVec     // events not yet applied, by projection
	ProjectionSeq   *prometheus.GaugeVec     // last applied stream sequence, by projection
	ProjectionApply *prometheus.CounterVec   // events applied, by projection
	// ProjectionBatches counts a projection's writes to its bucket: events applied per batch is the one over this.
	ProjectionBatches *prometheus.CounterVec
	HTTPRequests      *prometheus.CounterVec // by face, status class
	Registry          *prometheus.Registry
}

// New creates the collectors on a fresh registry (which also carries the Go and process collectors).
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		Appends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_events_appended_total", Help: "Events appended to the log.",
		}, []string{"aggregate"}),
		AppendConflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_append_conflicts_total", Help: "Appends refused because the aggregate moved on (optimistic concurrency).",
		}, []string{"aggregate"}),
		AppendSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "contrail_append_seconds", Help: "Time of one Append call.",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16),
		}),
		AppendRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_append_retries_total", Help: "Publishes sent again while the stream had no leader to answer them.",
		}, []string{"aggregate"}),
		StaleReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_stale_reads_total", Help: "Aggregate loads a lagging replica answered, completed from the stream leader.",
		}, []string{"aggregate"}),
		ProjectionStall: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_projection_stalls_total", Help: "Projection readers recreated because they stopped while the log moved on.",
		}, []string{"projection"}),
		HandlerAttempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_handler_attempts_total", Help: "Events handed to a handler, retries included.",
		}, []string{"handler"}),
		HandlerFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_handler_failures_total", Help: "Handler attempts that returned an error or panicked.",
		}, []string{"handler"}),
		HandlerPoisoned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_handler_poisoned_total", Help: "Events a handler gave up on (sent to the dead-letter queue).",
		}, []string{"handler"}),
		HandlerSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "contrail_handler_seconds", Help: "Time a handler spent on one event.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12),
		}, []string{"handler"}),
		ProjectionLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "contrail_projection_lag_events", Help: "Events in the log a projection has still to read: those of the types it folds, or, while it is far behind and reads the whole log, every event after the last it read.",
		}, []string{"projection"}),
		ProjectionSeq: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "contrail_projection_applied_sequence", Help: "Stream sequence of the last event a projection applied.",
		}, []string{"projection"}),
		ProjectionApply: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_projection_applied_total", Help: "Events a projection applied on this node.",
		}, []string{"projection"}),
		ProjectionBatches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_projection_batches_total", Help: "Batches of events a projection applied on this node, each one round of writes to its bucket.",
		}, []string{"projection"}),
		HTTPRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contrail_http_requests_total", Help: "HTTP requests by face and status class.",
		}, []string{"face", "code"}),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.Appends, m.AppendConflicts, m.AppendSeconds, m.AppendRetries, m.StaleReads, m.ProjectionStall,
		m.HandlerAttempts, m.HandlerFailures, m.HandlerPoisoned, m.HandlerSeconds,
		m.ProjectionLag, m.ProjectionSeq, m.ProjectionApply, m.ProjectionBatches, m.HTTPRequests,
	)
	return m
}
