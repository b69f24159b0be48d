package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/contrailhq/contrail/internal/bench"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure the platform against raw JetStream in the same run"}
	cmd.AddCommand(newBenchEventsCmd(), newBenchSessionsCmd(), newBenchRunsCmd(), newBenchCodeShotCmd(), newBenchTasksCmd(), newBenchFilesCmd(), newBenchResponsesCmd(), newBenchStartupCmd())
	return cmd
}

// benchCmd is a benchmark command: it runs measure in a fresh temporary data dir, telling its progress on stderr,
// and prints the report as a table or JSON. flags adds the benchmark's own options.
func benchCmd(use, short string, measure func(ctx context.Context, dir string, progress func(string)) (bench.Report, error),
	flags func(*cobra.Command)) *cobra.Command {
	var asJSON bool
	var cpuProfile string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "contrail-bench-"+use+"-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			tuneGC(cmd.Context()) // a bench measures the node as it serves
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			rep, err := measure(cmd.Context(), dir, func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "measuring", s, "...") })
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return rep.Print(cmd.OutOrStdout())
		},
	}
	flags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (for go tool pprof)")
	return cmd
}

// startCPUProfile profiles the process into path until the returned stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create the CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start the CPU profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func newBenchEventsCmd() *cobra.Command {
	var o bench.EventsOptions
	return benchCmd("events", "The log: appends, batched appends, projection apply and loads, each beside raw JetStream",
		func(ctx context.Context, dir string, progress func(string)) (bench.Report, error) {
			o.Dir = dir
			return bench.Events(ctx, o, progress)
		},
		func(cmd *cobra.Command) {
			cmd.Flags().IntVar(&o.N, "n", 20000, "events per measurement")
			cmd.Flags().IntVar(&o.Payload, "payload", 200, "bytes of text in each event")
			cmd.Flags().IntVar(&o.Loads, "loads", 2000, "aggregates loaded for the latency figures")
			cmd.Flags().BoolVar(&o.SyncAlways, "sync-always", false, "fsync every write, as --nats-sync-always does")
		})
}

func newBenchSessionsCmd() *cobra.Command {
	var o bench.SessionsOptions
	return benchCmd("sessions", "Sessions: post → reply visible on the subscription, p50/p99 at 1, 10 and 100 concurrent sessions, and events per query",
		func(ctx context.Context, dir string, progress func(string)) (bench.Report, error) {
			o.Dir = dir
			return bench.Sessions(ctx, o, progress)
		},
		func(cmd *cobra.Command) {
			cmd.Flags().IntSliceVar(&o.Concurrency, "sessions", []int{1, 10, 100}, "numbers of concurrent sessions to measure")
			cmd.Flags().IntVar(&o.Messages, "messages", 20, "queries each session posts, one after the other's reply")
		})
}

func newBenchRunsCmd() *cobra.Command {
	var o bench.RunsOptions
	return benchCmd("runs", "Assistants runs: create -> completed overhead, time to the first SSE byte, runs/s with many threads",
		func(ctx context.Context, dir string, progress func(string)) (bench.Report, error) {
			o.Dir = dir
			return bench.Runs(ctx, o, progress)
		},
		func(cmd *cobra.Command) {
			cmd.Flags().IntVar(&o.Runs, "runs", 200, "runs one after another for the latency figures")
			cmd.Flags().IntVar(&o.Threads, "threads", 100, "threads running at once for the throughput figure")
			cmd.Flags().DurationVar(&o.Duration, "duration", 10*time.Second, "how long the throughput figure is measured")
		})
}

func newBenchCodeShotCmd() *cobra.Command {
	var o bench.CodeShotOptions
	return benchCmd("codeshot", "What the platform adds to a Code Shot query beyond the model and the func",
		func(ctx context.Context, dir string, progress func(string)) (bench.Report, error) {
			o.Dir = dir
			return bench.CodeShot(ctx, o, progress)
		},
		func(cmd *cobra.Command) {
			cmd.Flags().IntVar(&o.Queries, "queries", 200, "queries each way")
		})
}

func newBenchTasksCmd() *cobra.Command {
	var o bench.TasksOptions
	return benchCmd("tasks", "Task executions: steps/s and execution latency of a 10-step task, and a map-reduce over 1,000 items",
		func(ctx context.Context, dir string, progress func(string)) (bench.Report, error) {
			o.Dir = dir
			return bench.Tasks(ctx, o, progress)
		},
		func(cmd *cobra.Command) {
			cmd.Flags().IntVar(&o.Executions, "executions", 200, "executions of the 10-step task")
			cmd.Flags().IntVar(&o.InFlight, "in-flight", 50, "executions running at once")
			cmd.Flags().IntVar(&o.Items, "items", 1000, "items of the map-reduce")
			cmd.Flags().IntVar(&o.Parallelism, "parallelism", 100, "parallelism of the map-reduce")
		})
}

func newBenchFilesCmd() *cobra.Command {
	var o bench.FilesOptions
	return benchCmd("files", "Vector stores: a 10-page PDF from upload to searchable, and searches of a store of 10,000 chunks",
		func(ctx context.Context, dir string, progress func(string)) (bench.Report, error) {
			o.Dir = dir
			return bench.Files(ctx, o, progress)
		},
		func(cmd *cobra.Command) {
			cmd.Flags().StringVar(&o.ModelsDir, "models-dir", "", "where the embedder's weights are (default: the node's own, <data-dir>/models)")
			cmd.Flags().IntVar(&o.PDFs, "pdfs", 20, "10-page PDFs made searchable one after another")
			cmd.Flags().IntVar(&o.Chunks, "chunks", 10000, "chunks in the searched store")
			cmd.Flags().IntVar(&o.Searches, "searches", 200, "searches timed")
			cmd.Flags().IntVar(&o.BigMB, "big-mb", 0, "also process a text file of this many MB and report the peak memory (0: skip)")
		})
}

func newBenchResponsesCmd() *cobra.Command {
	var o bench.ResponsesOptions
	return benchCmd("responses", "Responses API: create -> completed, time to the first SSE byte, responses/s with many clients, replay of a long stream",
		func(ctx context.Context, dir string, progress func(string)) (bench.Report, error) {
			o.Dir = dir
			return bench.Responses(ctx, o, progress)
		},
		func(cmd *cobra.Command) {
			cmd.Flags().IntVar(&o.Responses, "responses", 200, "responses one after another for the latency figures")
			cmd.Flags().IntVar(&o.Clients, "clients", 100, "clients creating responses at once for the throughput figure")
			cmd.Flags().DurationVar(&o.Duration, "duration", 10*time.Second, "how long the throughput figure is measured")
			cmd.Flags().IntVar(&o.Frames, "frames", 1000, "frames of the stream the replay figure reads")
		})
}
