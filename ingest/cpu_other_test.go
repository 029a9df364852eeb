//go:build !unix

package ingest

import "time"

// processCPU is not measured here: the benchmarks report it as zero.
func processCPU() time.Duration { return 0 }
