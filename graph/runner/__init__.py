"""The runner: suites of tasks, durable sweeps over the strategy graphs, results, traces and reports."""
