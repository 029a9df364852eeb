package ingest

import (
	"strings"

	"github.com/shopspring/decimal"
)

// setGPU fills the GPU fields of row from an instance type. hours is the
// usage in instance-hours and only counts when isHours (compute-hour rows).
func setGPU(row *Row, m GPUMapper, provider, instanceType string, hours decimal.Decimal, isHours bool) {
	if instanceType == "" {
		return
	}
	row.InstanceType = instanceType
	if m == nil {
		return
	}
	gpu, n, ok := m.InstanceGPU(provider, instanceType)
	if !ok || n <= 0 || gpu == "" {
		return
	}
	row.GPUType = gpu
	row.GPUCount = decimal.NewFromFloat(n)
	if isHours {
		row.GPUHours = hours.Mul(row.GPUCount)
	}
}

// awsInstanceFromUsageType extracts the instance type from an EC2 usage
// type such as "USE1-BoxUsage:p4d.24xlarge" or "SpotUsage:g5.xlarge".
// compute reports whether the usage type is instance running time.
func awsInstanceFromUsageType(ut string) (instance string, compute bool) {
	kind, inst, ok := strings.Cut(ut, ":")
	if !ok || !strings.Contains(inst, ".") {
		return "", false
	}
	compute = strings.Contains(kind, "BoxUsage") || strings.Contains(kind, "SpotUsage") ||
		strings.Contains(kind, "DedicatedUsage") || strings.Contains(kind, "HostUsage") ||
		strings.Contains(kind, "Reservation")
	return inst, compute
}

// gcpAccelerators maps the GPU name in GCP accelerator SKU descriptions
// ("Nvidia Tesla A100 GPU running in Americas") to Burnrate's GPU names.
var gcpAccelerators = map[string]string{
	"b200": "B200", "h200": "H200", "h100": "H100", "a100": "A100", "l4": "L4",
	"t4": "T4", "v100": "V100", "p100": "P100", "p4": "P4", "k80": "K80",
}

// gcpGPUFromSKU returns the GPU named by an accelerator SKU description.
func gcpGPUFromSKU(desc string) (string, bool) {
	if !strings.Contains(strings.ToLower(desc), "gpu") {
		return "", false
	}
	words := strings.Fields(strings.ToLower(desc))
	for i, w := range words {
		if name, ok := gcpAccelerators[w]; ok {
			if name == "A100" && i+1 < len(words) && words[i+1] == "80gb" {
				name = "A100-80GB"
			}
			return name, true
		}
	}
	return "", false
}

// azureVMSize turns a meter name like "NC24ads A100 v4 Spot" into the VM
// size "Standard_NC24ads_A100_v4".
func azureVMSize(meter string) string {
	m := strings.TrimSpace(meter)
	for _, suf := range []string{" Low Priority", " Spot"} {
		m = strings.TrimSuffix(m, suf)
	}
	if m == "" || strings.ContainsAny(m, "/") {
		return "" // "D4 v3/D4s v3" names two sizes; ambiguous
	}
	return "Standard_" + strings.ReplaceAll(m, " ", "_")
}
