// Package curgen writes realistic legacy AWS Cost and Usage Report CSV files
// of any size, for benchmarks of the ingest path (parser, CLI, COPY).
//
// The files have 130 columns in CUR order (identity/, bill/, lineItem/,
// product/, pricing/, reservation/, savingsPlan/, resourceTags/,
// costCategory/), hourly line items spread over several days, GPU (p4d, p5,
// g5) and non-GPU EC2 instances, Savings Plan covered usage and negations,
// S3 and EBS storage, data transfer, credits and tax.
package curgen

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// Columns is the header Generate writes.
var Columns = buildColumns()

var productAttrs = []string{
	"ProductName", "availability",
	"clockSpeed", "comments", "contentType", "currentGeneration",
	"databaseEngine", "dedicatedEbsThroughput", "deploymentOption", "description",
	"directorySize", "directoryType", "directoryTypeDescription", "durability", "ebsOptimized", "ecu", "endpointType",
	"engineCode", "enhancedNetworkingSupported", "feeCode", "feeDescription", "fromLocation", "fromLocationType",
	"gpu", "gpuMemory", "group", "groupDescription", "includedServices", "instanceFamily", "instanceType", "isshadow",
	"iswebsocket", "licenseModel", "location", "locationType", "maxIopsBurstPerformance",
	"maxIopsvolume", "maxThroughputvolume", "maxVolumeSize", "memory", "memoryGib", "messageDeliveryFrequency",
	"messageDeliveryOrder", "minVolumeSize", "networkPerformance", "operatingSystem", "operation",
	"origin", "physicalProcessor", "preInstalledSw",
	"processorArchitecture", "processorFeatures", "productFamily", "protocol",
	"provisioned", "queueType", "recipient", "region", "requestDescription", "requestType", "resourceEndpoint",
	"routingTarget", "routingType", "servicecode", "sku", "softwareType", "storage", "storageClass", "storageMedia",
	"storageType", "tenancy", "toLocation", "toLocationType",
	"transferType", "usagetype", "vcpu", "version", "virtualInterfaceType", "volumeType",
}

func buildColumns() []string {
	cols := []string{
		"identity/LineItemId", "identity/TimeInterval", "bill/InvoiceId", "bill/BillingEntity", "bill/BillType",
		"bill/PayerAccountId", "bill/BillingPeriodStartDate", "bill/BillingPeriodEndDate", "lineItem/UsageAccountId",
		"lineItem/LineItemType", "lineItem/UsageStartDate", "lineItem/UsageEndDate", "lineItem/ProductCode",
		"lineItem/UsageType", "lineItem/Operation", "lineItem/AvailabilityZone", "lineItem/ResourceId",
		"lineItem/UsageAmount", "lineItem/NormalizationFactor", "lineItem/NormalizedUsageAmount",
		"lineItem/CurrencyCode", "lineItem/UnblendedRate", "lineItem/UnblendedCost", "lineItem/BlendedRate",
		"lineItem/BlendedCost", "lineItem/LineItemDescription", "lineItem/TaxType", "lineItem/LegalEntity",
	}
	for _, a := range productAttrs {
		cols = append(cols, "product/"+a)
	}
	cols = append(cols,
		"pricing/LeaseContractLength", "pricing/OfferingClass", "pricing/PurchaseOption", "pricing/RateCode",
		"pricing/currency", "pricing/publicOnDemandCost", "pricing/publicOnDemandRate", "pricing/term", "pricing/unit",
		"reservation/EffectiveCost", "reservation/ReservationARN", "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod",
		"reservation/UnusedRecurringFee",
		"savingsPlan/SavingsPlanARN", "savingsPlan/SavingsPlanEffectiveCost", "savingsPlan/SavingsPlanRate",
		"savingsPlan/TotalCommitmentToDate", "savingsPlan/UsedCommitment",
		"resourceTags/user:team", "resourceTags/user:project", "resourceTags/user:env", "resourceTags/aws:createdBy",
		"costCategory/CostCenter",
	)
	return cols
}

type instance struct {
	name, family string
	rateMicros   int64 // USD per hour × 1e6
	vcpu         string
}

var instances = []instance{
	{"p4d.24xlarge", "GPU instance", 32_772_600, "96"},
	{"p5.48xlarge", "GPU instance", 98_320_000, "192"},
	{"g5.xlarge", "GPU instance", 1_006_000, "4"},
	{"g5.12xlarge", "GPU instance", 5_672_000, "48"},
	{"m5.large", "General purpose", 96_000, "2"},
	{"c5.xlarge", "Compute optimized", 170_000, "4"},
	{"t3.medium", "General purpose", 41_600, "2"},
	{"r5.2xlarge", "Memory optimized", 504_000, "8"},
}

var (
	teams    = []string{"ml-research", "platform", "inference", "data", ""}
	projects = []string{"llm-pretrain", "ranker", "search", "etl", "web"}
	envs     = []string{"prod", "staging", "dev"}
	azs      = []string{"us-east-1a", "us-east-1b", "us-west-2a"}
)

// Generate writes a header and rows line items to w, deterministically for
// a given seed. Days are spread over the first days of January 2026.
func Generate(w io.Writer, rows int, seed int64) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	cw := csv.NewWriter(bw)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	idx := make(map[string]int, len(Columns))
	for i, c := range Columns {
		idx[c] = i
	}
	rec := make([]string, len(Columns))
	set := func(col, v string) { rec[idx[col]] = v }
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	periodStart := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const perHour = 2000 // line items per hour → 1M rows ≈ 21 days

	for i := range rows {
		clear(rec)
		start := periodStart.Add(time.Duration(i/perHour) * time.Hour)
		end := start.Add(time.Hour)
		s, e := start.Format("2006-01-02T15:04:05Z"), end.Format("2006-01-02T15:04:05Z")
		set("identity/LineItemId", fmt.Sprintf("%040x", rng.Uint64()))
		set("identity/TimeInterval", s+"/"+e)
		set("bill/BillingEntity", "AWS")
		set("bill/BillType", "Anniversary")
		set("bill/PayerAccountId", "111122223333")
		set("bill/BillingPeriodStartDate", "2026-01-01T00:00:00Z")
		set("bill/BillingPeriodEndDate", "2026-02-01T00:00:00Z")
		set("lineItem/UsageAccountId", []string{"111122223333", "444455556666", "777788889999"}[rng.IntN(3)])
		set("lineItem/UsageStartDate", s)
		set("lineItem/UsageEndDate", e)
		set("lineItem/CurrencyCode", "USD")
		set("lineItem/LegalEntity", "Amazon Web Services, Inc.")
		set("pricing/currency", "USD")
		az := azs[rng.IntN(len(azs))]
		region := az[:len(az)-1]
		set("product/region", region)
		set("product/location", "US East (N. Virginia)")
		set("product/locationType", "AWS Region")
		team := teams[rng.IntN(len(teams))]
		set("resourceTags/user:team", team)
		set("resourceTags/user:project", projects[rng.IntN(len(projects))])
		set("resourceTags/user:env", envs[rng.IntN(len(envs))])
		if rng.IntN(4) == 0 {
			set("resourceTags/aws:createdBy", "AssumedRole:AROAEXAMPLE:terraform")
		}
		set("costCategory/CostCenter", strconv.Itoa(100+rng.IntN(5)))

		var costMicros int64
		switch k := rng.IntN(100); {
		case k < 62: // EC2 on-demand or SP-covered instance hours
			in := instances[rng.IntN(len(instances))]
			set("lineItem/ProductCode", "AmazonEC2")
			set("product/ProductName", "Amazon Elastic Compute Cloud")
			set("product/productFamily", "Compute Instance")
			set("product/servicecode", "AmazonEC2")
			set("product/instanceType", in.name)
			set("product/instanceFamily", in.family)
			set("product/vcpu", in.vcpu)
			set("product/operatingSystem", "Linux")
			set("product/tenancy", "Shared")
			ut := "BoxUsage:" + in.name
			if region != "us-east-1" {
				ut = "USW2-" + ut
			}
			set("lineItem/UsageType", ut)
			set("product/usagetype", ut)
			set("lineItem/Operation", "RunInstances")
			set("lineItem/AvailabilityZone", az)
			set("lineItem/ResourceId", fmt.Sprintf("i-%017x", rng.Uint64()>>4))
			set("lineItem/UsageAmount", "1")
			set("pricing/unit", "Hrs")
			set("pricing/term", "OnDemand")
			rate := micros(in.rateMicros)
			set("lineItem/UnblendedRate", rate)
			set("lineItem/BlendedRate", rate)
			set("pricing/publicOnDemandRate", rate)
			set("pricing/publicOnDemandCost", rate)
			costMicros = in.rateMicros
			if k < 12 {
				set("lineItem/LineItemType", "SavingsPlanCoveredUsage")
				set("savingsPlan/SavingsPlanARN", "arn:aws:savingsplans::111122223333:savingsplan/4d3f-example")
				set("savingsPlan/SavingsPlanEffectiveCost", micros(in.rateMicros*7/10))
				set("savingsPlan/SavingsPlanRate", micros(in.rateMicros*7/10))
			} else {
				set("lineItem/LineItemType", "Usage")
			}
			set("lineItem/LineItemDescription", "$"+rate+" per On Demand Linux "+in.name+" Instance Hour")
		case k < 67: // Savings Plan negation of covered usage
			in := instances[rng.IntN(4)]
			set("lineItem/LineItemType", "SavingsPlanNegation")
			set("lineItem/ProductCode", "AmazonEC2")
			set("product/ProductName", "Amazon Elastic Compute Cloud")
			set("lineItem/UsageType", "BoxUsage:"+in.name)
			set("lineItem/UsageAmount", "1")
			set("pricing/unit", "Hrs")
			costMicros = -in.rateMicros
			set("lineItem/LineItemDescription", "SavingsPlanNegation used by AccountId : 111122223333")
			set("savingsPlan/SavingsPlanARN", "arn:aws:savingsplans::111122223333:savingsplan/4d3f-example")
		case k < 77: // S3 storage
			gb := rng.Int64N(5_000_000) // micro-GB-months
			set("lineItem/LineItemType", "Usage")
			set("lineItem/ProductCode", "AmazonS3")
			set("product/ProductName", "Amazon Simple Storage Service")
			set("product/productFamily", "Storage")
			set("product/storageClass", "General Purpose")
			set("lineItem/UsageType", "TimedStorage-ByteHrs")
			set("lineItem/Operation", "StandardStorage")
			set("lineItem/ResourceId", "burnrate-"+projects[rng.IntN(len(projects))])
			set("lineItem/UsageAmount", micros(gb))
			set("pricing/unit", "GB-Mo")
			set("lineItem/UnblendedRate", "0.023")
			costMicros = gb * 23 / 1000
			set("pricing/publicOnDemandCost", micros(costMicros))
			set("lineItem/LineItemDescription", "$0.023 per GB - first 50 TB / month of storage used")
		case k < 85: // data transfer
			gb := rng.Int64N(50_000_000)
			set("lineItem/LineItemType", "Usage")
			set("lineItem/ProductCode", "AmazonEC2")
			set("product/ProductName", "Amazon Elastic Compute Cloud")
			set("product/productFamily", "Data Transfer")
			set("product/transferType", "AWS Outbound")
			set("lineItem/UsageType", "DataTransfer-Out-Bytes")
			set("lineItem/Operation", "RunInstances")
			set("lineItem/UsageAmount", micros(gb))
			set("pricing/unit", "GB")
			set("lineItem/UnblendedRate", "0.09")
			costMicros = gb * 9 / 100
			set("pricing/publicOnDemandCost", micros(costMicros))
			set("lineItem/LineItemDescription", "$0.090 per GB - first 10 TB / month data transfer out beyond the global free tier")
		case k < 94: // EBS volumes
			gb := rng.Int64N(2_000_000)
			set("lineItem/LineItemType", "Usage")
			set("lineItem/ProductCode", "AmazonEC2")
			set("product/ProductName", "Amazon Elastic Compute Cloud")
			set("product/productFamily", "Storage")
			set("product/volumeType", "General Purpose")
			set("lineItem/UsageType", "EBS:VolumeUsage.gp3")
			set("lineItem/Operation", "CreateVolume-Gp3")
			set("lineItem/AvailabilityZone", az)
			set("lineItem/ResourceId", fmt.Sprintf("vol-%017x", rng.Uint64()>>4))
			set("lineItem/UsageAmount", micros(gb))
			set("pricing/unit", "GB-Mo")
			costMicros = gb * 8 / 100
			set("pricing/publicOnDemandCost", micros(costMicros))
			set("lineItem/LineItemDescription", "$0.08 per GB-month of General Purpose (gp3) provisioned storage")
		case k < 98: // credits
			set("lineItem/LineItemType", "Credit")
			set("lineItem/ProductCode", "AmazonEC2")
			set("product/ProductName", "Amazon Elastic Compute Cloud")
			set("lineItem/UsageType", "BoxUsage:p4d.24xlarge")
			costMicros = -rng.Int64N(20_000_000)
			set("lineItem/LineItemDescription", "AWS Activate Credits")
		default: // tax
			set("lineItem/LineItemType", "Tax")
			set("lineItem/ProductCode", "AmazonEC2")
			set("product/ProductName", "Amazon Elastic Compute Cloud")
			set("lineItem/TaxType", "Sales")
			costMicros = rng.Int64N(3_000_000)
			set("lineItem/LineItemDescription", "Tax for product code AmazonEC2")
		}
		c := micros(costMicros)
		set("lineItem/UnblendedCost", c)
		set("lineItem/BlendedCost", c)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// micros formats v millionths as a decimal string ("-1.5", "0.000023").
func micros(v int64) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v/1_000_000, 10)
	if f := v % 1_000_000; f != 0 {
		frac := strconv.FormatInt(f+1_000_000, 10)[1:]
		for frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		s += "." + frac
	}
	if neg {
		s = "-" + s
	}
	return s
}
