package pricing

import (
	"regexp"
	"strconv"
	"strings"
)

// familyRule maps instance types of one family to GPU × count when the catalog has no row for the
// exact type. The rules below, in order (first match wins):
//
//	provider  pattern                                  GPU          count
//	aws       p4d.*                                    A100         8
//	aws       p4de.*                                   A100-80GB    8
//	aws       p5.4xlarge / p5.*                        H100         1 / 8
//	aws       p5e.* , p5en.*                           H200         8
//	aws       p6-b200.*                                B200         8
//	aws       p3dn.*                                   V100-32GB    8
//	aws       p3.2xlarge / 8xlarge / 16xlarge          V100         1 / 4 / 8
//	aws       g4dn.12xlarge / metal / other            T4           4 / 8 / 1
//	aws       g5.12xlarge,24xlarge / 48xlarge / other  A10G         4 / 8 / 1
//	aws       g6.12xlarge,24xlarge / 48xlarge / other  L4           4 / 8 / 1
//	aws       g6e.12xlarge,24xlarge / 48xlarge / other L40S         4 / 8 / 1
//	gcp       a2-highgpu-Ng, a2-megagpu-Ng             A100         N
//	gcp       a2-ultragpu-Ng                           A100-80GB    N
//	gcp       a3-highgpu-Ng, a3-edgegpu-Ng, a3-megagpu-Ng  H100     N
//	gcp       a3-ultragpu-Ng                           H200         N
//	gcp       a4-highgpu-Ng                            B200         N
//	gcp       g2-standard-24 / 48 / 96 / other         L4           2 / 4 / 8 / 1
//	gcp       <machine>+NxGPU (attached GPUs)          GPU          N
//	azure     Standard_NC{24,48,96}ads_A100_v4         A100-80GB    1 / 2 / 4
//	azure     Standard_ND96asr_v4 / ND96amsr_A100_v4   A100 / A100-80GB  8
//	azure     Standard_ND96isr_H100_v5 / _H200_v5 / _MI300X_v5  H100 / H200 / MI300X  8
//	azure     Standard_NC40ads_H100_v5, NCC40ads_H100_v5 / NC80adis_H100_v5  H100  1 / 2
//	azure     Standard_NC{6,12,24}s_v3, NC24rs_v3      V100         1 / 2 / 4
//	azure     Standard_ND40rs_v2                       V100-32GB    8
//	azure     Standard_NC{4,8,16,64}as_T4_v3           T4           1 / 1 / 1 / 4
//	azure     Standard_NC{8,16,32}ads_A10_v4           A10          1 / 1 / 2
//	azure     Standard_NV{6,12,18,36,72}ads_A10_v5     A10          1/6, 1/3, 1/2, 1, 2
type familyRule struct {
	provider string
	re       *regexp.Regexp
	gpu      string
	count    func(m []string) float64
}

func fixed(n float64) func([]string) float64 { return func([]string) float64 { return n } }

// bySize returns a count chosen by the first capture group (the size), with a default.
func bySize(def float64, sizes map[string]float64) func([]string) float64 {
	return func(m []string) float64 {
		if len(m) > 1 {
			if n, ok := sizes[m[1]]; ok {
				return n
			}
		}
		return def
	}
}

// captured parses the first capture group as the count.
func captured(m []string) float64 {
	n, _ := strconv.ParseFloat(m[1], 64)
	return n
}

var familyRules = []familyRule{
	{"aws", regexp.MustCompile(`^p4d\.`), "A100", fixed(8)},
	{"aws", regexp.MustCompile(`^p4de\.`), "A100-80GB", fixed(8)},
	{"aws", regexp.MustCompile(`^p5\.(\w+)$`), "H100", bySize(8, map[string]float64{"4xlarge": 1})},
	{"aws", regexp.MustCompile(`^p5en?\.`), "H200", fixed(8)},
	{"aws", regexp.MustCompile(`^p6-b200\.`), "B200", fixed(8)},
	{"aws", regexp.MustCompile(`^p3dn\.`), "V100-32GB", fixed(8)},
	{"aws", regexp.MustCompile(`^p3\.(\w+)$`), "V100", bySize(1, map[string]float64{"8xlarge": 4, "16xlarge": 8})},
	{"aws", regexp.MustCompile(`^g4dn\.(\w+)$`), "T4", bySize(1, map[string]float64{"12xlarge": 4, "metal": 8})},
	{"aws", regexp.MustCompile(`^g5\.(\w+)$`), "A10G", bySize(1, map[string]float64{"12xlarge": 4, "24xlarge": 4, "48xlarge": 8})},
	{"aws", regexp.MustCompile(`^g6\.(\w+)$`), "L4", bySize(1, map[string]float64{"12xlarge": 4, "24xlarge": 4, "48xlarge": 8})},
	{"aws", regexp.MustCompile(`^g6e\.(\w+)$`), "L40S", bySize(1, map[string]float64{"12xlarge": 4, "24xlarge": 4, "48xlarge": 8})},
	{"gcp", regexp.MustCompile(`^a2-(?:highgpu|megagpu)-(\d+)g$`), "A100", captured},
	{"gcp", regexp.MustCompile(`^a2-ultragpu-(\d+)g$`), "A100-80GB", captured},
	{"gcp", regexp.MustCompile(`^a3-(?:highgpu|edgegpu|megagpu)-(\d+)g$`), "H100", captured},
	{"gcp", regexp.MustCompile(`^a3-ultragpu-(\d+)g$`), "H200", captured},
	{"gcp", regexp.MustCompile(`^a4-highgpu-(\d+)g$`), "B200", captured},
	{"gcp", regexp.MustCompile(`^g2-standard-(\d+)$`), "L4", bySize(1, map[string]float64{"24": 2, "48": 4, "96": 8})},
	{"azure", regexp.MustCompile(`^standard_nc(\d+)ads_a100_v4$`), "A100-80GB", bySize(1, map[string]float64{"48": 2, "96": 4})},
	{"azure", regexp.MustCompile(`^standard_nd96asr_v4$`), "A100", fixed(8)},
	{"azure", regexp.MustCompile(`^standard_nd96amsr_a100_v4$`), "A100-80GB", fixed(8)},
	{"azure", regexp.MustCompile(`^standard_nd96is?r_h100_v5$`), "H100", fixed(8)},
	{"azure", regexp.MustCompile(`^standard_nd96is?r_h200_v5$`), "H200", fixed(8)},
	{"azure", regexp.MustCompile(`^standard_nd96is?r_mi300x_v5$`), "MI300X", fixed(8)},
	{"azure", regexp.MustCompile(`^standard_ncc?(\d+)adi?s_h100_v5$`), "H100", bySize(1, map[string]float64{"80": 2})},
	{"azure", regexp.MustCompile(`^standard_nc(\d+)r?s_v3$`), "V100", bySize(1, map[string]float64{"12": 2, "24": 4})},
	{"azure", regexp.MustCompile(`^standard_nd40rs_v2$`), "V100-32GB", fixed(8)},
	{"azure", regexp.MustCompile(`^standard_nc(\d+)as_t4_v3$`), "T4", bySize(1, map[string]float64{"64": 4})},
	{"azure", regexp.MustCompile(`^standard_nc(\d+)ads_a10_v4$`), "A10", bySize(1, map[string]float64{"32": 2})},
	{"azure", regexp.MustCompile(`^standard_nv(\d+)adm?s_a10_v5$`), "A10", bySize(1, map[string]float64{"6": 0.167, "12": 0.333, "18": 0.5, "72": 2})},
}

// gcpAttached matches SkyPilot-style GCP names with attached GPUs, e.g. "n1-standard-8+4xT4".
var gcpAttached = regexp.MustCompile(`^[a-z0-9-]+\+(\d+)x([a-z0-9-]+)$`)

// familyGPU applies familyRules; see the table on familyRule.
func familyGPU(provider, instanceType string) (string, float64, bool) {
	p := strings.ToLower(strings.TrimSpace(provider))
	it := strings.ToLower(strings.TrimSpace(instanceType))
	switch p {
	case "google", "google cloud", "gcp", "gce":
		p = "gcp"
	case "amazon", "amazon web services", "aws", "ec2":
		p = "aws"
	case "microsoft", "microsoft azure", "azure":
		p = "azure"
	}
	for _, r := range familyRules {
		if r.provider != p {
			continue
		}
		if m := r.re.FindStringSubmatch(it); m != nil {
			return r.gpu, r.count(m), true
		}
	}
	if p == "gcp" {
		if m := gcpAttached.FindStringSubmatch(it); m != nil {
			g, _ := NormalizeGPU(m[2])
			n, _ := strconv.ParseFloat(m[1], 64)
			return g, n, true
		}
	}
	return "", 0, false
}
