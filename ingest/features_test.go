package ingest

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/shopspring/decimal"
)

func TestGeneratedCURGPUsTeamsAndEffectiveCost(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := curgen.Generate(&buf, 5000, 7); err != nil {
		t.Fatal(err)
	}
	rows, src, err := readAll(t, &buf, Options{FileName: "gen.csv", GPUs: testGPUs})
	if err != nil {
		t.Fatal(err)
	}
	if src != SourceAWSCUR || len(rows) != 5000 {
		t.Fatalf("source %s, %d rows", src, len(rows))
	}
	var gpuRows, covered, negations, credits int
	for _, r := range rows {
		inst := ""
		if _, after, ok := strings.Cut(r.SKU, ":"); ok {
			inst = after
		}
		switch {
		case r.GPUType != "":
			gpuRows++
			g := testGPUs["aws/"+inst]
			if r.GPUType != g.gpu || !r.GPUCount.Equal(decimal.NewFromFloat(g.count)) {
				t.Fatalf("%s: GPU %s × %s", inst, r.GPUType, r.GPUCount)
			}
			wantHours := decimal.Zero
			if r.ChargeCategory == ChargeUsage && r.BilledCost.Sign() > 0 {
				wantHours = r.ConsumedQuantity.Mul(r.GPUCount)
			}
			if !r.GPUHours.Equal(wantHours) {
				t.Fatalf("%s (%s, %s): GPU hours %s, want %s", inst, r.ChargeCategory, r.BilledCost, r.GPUHours, wantHours)
			}
		case inst == "m5.large" || inst == "t3.medium":
			if !r.GPUHours.IsZero() {
				t.Fatalf("%s has GPU hours", inst)
			}
		}
		if r.Team != r.Tags["team"] {
			t.Fatalf("team %q, tags %v", r.Team, r.Tags)
		}
		if r.Tags["costCategory/CostCenter"] == "" {
			t.Fatalf("cost category missing from tags %v", r.Tags)
		}
		switch {
		case r.BilledCost.Sign() < 0 && r.ChargeCategory == ChargeCredit:
			credits++
			if !r.EffectiveCost.Equal(r.BilledCost) {
				t.Fatalf("credit effective %s != billed %s", r.EffectiveCost, r.BilledCost)
			}
		case r.BilledCost.Sign() < 0: // SavingsPlanNegation
			negations++
			if !r.EffectiveCost.IsZero() || !r.GPUHours.IsZero() {
				t.Fatalf("negation: effective %s, GPU hours %s", r.EffectiveCost, r.GPUHours)
			}
		case !r.EffectiveCost.Equal(r.BilledCost):
			covered++ // SavingsPlanCoveredUsage at 70 %
			if !r.EffectiveCost.Equal(r.BilledCost.Mul(decimal.New(7, -1))) {
				t.Fatalf("covered usage effective %s, billed %s", r.EffectiveCost, r.BilledCost)
			}
		}
	}
	if gpuRows == 0 || covered == 0 || negations == 0 || credits == 0 {
		t.Errorf("generator mix: gpu=%d covered=%d negations=%d credits=%d", gpuRows, covered, negations, credits)
	}
}

func TestTeamFromTagsLabelsAndCostCategories(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		opts     Options
		want     []string
	}{
		{"AWSUserTagBeatsCostCategory",
			"lineItem/UsageStartDate,lineItem/UnblendedCost,resourceTags/user:Team,costCategory/team\n" +
				"2026-01-01T00:00:00Z,1,ml,finance\n2026-01-01T00:00:00Z,1,,finance\n",
			Options{}, []string{"ml", "finance"}},
		{"CustomKey",
			"lineItem/UsageStartDate,lineItem/UnblendedCost,resourceTags/user:squad,resourceTags/user:team\n" +
				"2026-01-01T00:00:00Z,1,search,ml\n",
			Options{TeamTagKey: "Squad"}, []string{"search"}},
		{"CUR2MapColumn",
			"line_item_usage_start_date,line_item_unblended_cost,resource_tags\n" +
				`2026-01-01T00:00:00Z,1,"{""user_team"": ""ml""}"` + "\n" + `2026-01-01T00:00:00Z,1,"{user_team=infra, user_env=prod}"` + "\n",
			Options{}, []string{"ml", "infra"}},
		{"GCPLabels",
			"usage_start_time,cost,service.description,labels,credits\n" +
				`2026-01-01 00:00:00+00:00,1,Compute Engine,"[{'key': 'team', 'value': 'ml'}]",[]` + "\n" +
				`2026-01-01 00:00:00+00:00,1,Compute Engine,"[{""key"": ""team"", ""value"": ""web""}]",[]` + "\n",
			Options{}, []string{"ml", "web"}},
		{"AzureTagsWithoutBraces",
			"Date,CostInBillingCurrency,BillingCurrencyCode,Tags\n" +
				`09/21/2023,1,EUR,"""CostCenter"": ""1234"",""team"": ""ml"""` + "\n",
			Options{}, []string{"ml"}},
		{"FOCUSTags",
			"BilledCost,ChargePeriodStart,Tags\n" + `1,2024-09-18 22:00:00,"{""Team"": ""ml"", ""flag"": null}"` + "\n",
			Options{}, []string{"ml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rows, _, err := readAll(t, strings.NewReader(tt.in), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != len(tt.want) {
				t.Fatalf("%d rows", len(rows))
			}
			for i, w := range tt.want {
				if rows[i].Team != w {
					t.Errorf("row %d team %q, want %q (tags %v)", i, rows[i].Team, w, rows[i].Tags)
				}
			}
		})
	}
}

func TestGPUsFromGCPAndAzure(t *testing.T) {
	t.Parallel()
	gcp := "usage_start_time,usage_end_time,cost,service.description,sku.description,usage.amount,usage.unit,credits\n" +
		"2026-01-01 00:00:00+00:00,2026-01-01 01:00:00+00:00,2.93,Compute Engine,Nvidia Tesla A100 GPU running in Americas,28800,seconds,[]\n" +
		"2026-01-01 00:00:00+00:00,2026-01-01 01:00:00+00:00,0.5,Compute Engine,A2 Instance Core running in Americas,43200,seconds,[]\n"
	rows, _, err := readAll(t, strings.NewReader(gcp), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; r.GPUType != "A100" || r.GPUHours.String() != "8" || r.GPUCount.String() != "8" {
		t.Errorf("GCP accelerator row: %s × %s, %s h", r.GPUType, r.GPUCount, r.GPUHours)
	}
	if rows[1].GPUType != "" {
		t.Errorf("GCP core row got GPU %q", rows[1].GPUType)
	}

	azure := "Date,MeterCategory,MeterName,Quantity,UnitOfMeasure,CostInBillingCurrency,BillingCurrencyCode,AdditionalInfo\n" +
		`09/21/2023,Virtual Machines,NC24ads A100 v4,10,1 Hour,36.7,USD,"{""ServiceType"": ""Standard_NC24ads_A100_v4"", ""VCPUs"": 24}"` + "\n" +
		"09/21/2023,Virtual Machines,NV6ads A10 v5 Spot,6,1 Hour,1.2,USD,\n" +
		"09/21/2023,Storage,S4 Disks,1,1 /Month,1.5,USD,\n"
	rows, _, err = readAll(t, strings.NewReader(azure), Options{GPUs: testGPUs})
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; r.GPUType != "A100-80GB" || r.GPUHours.String() != "10" {
		t.Errorf("Azure NC A100 row: %s, %s h", r.GPUType, r.GPUHours)
	}
	if r := rows[1]; r.GPUType != "A10" || r.GPUHours.String() != "1.002" {
		t.Errorf("Azure NV A10 spot row: %s, %s h", r.GPUType, r.GPUHours)
	}
	if rows[2].GPUType != "" {
		t.Errorf("storage row got GPU %q", rows[2].GPUType)
	}
}

func TestFOCUSEffectiveFallbackAndCredits(t *testing.T) {
	t.Parallel()
	in := "BilledCost,EffectiveCost,ChargeCategory,ChargePeriodStart,ChargePeriodEnd,BillingCurrency\n" +
		"1.5,0,usage,2024-09-18 22:00:00,2024-09-18 23:00:00,usd\n" +
		"1.5,NULL,Usage,2024-09-18T22:00:00Z,NULL,USD\n" +
		"-2.6137,-3.0,CREDIT,5/1/25,,USD\n" +
		"0,0,Purchase,2024-09-18,,USD\n"
	rows, _, err := readAll(t, strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		eff string
		cat ChargeCategory
	}{{"1.5", ChargeUsage}, {"1.5", ChargeUsage}, {"-3", ChargeCredit}, {"0", ChargePurchase}}
	for i, w := range want {
		if rows[i].EffectiveCost.String() != w.eff || rows[i].ChargeCategory != w.cat {
			t.Errorf("row %d: effective %s %s, want %s %s", i, rows[i].EffectiveCost, rows[i].ChargeCategory, w.eff, w.cat)
		}
	}
	if got := rows[2].ChargePeriodStart; !got.Equal(time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("5/1/25 parsed as %s", got)
	}
}

func TestAWSTimeIntervalFallbackAndShortRecords(t *testing.T) {
	t.Parallel()
	// Data rows shorter than the header (the koku fixture) read as empty trailing cells.
	in := "identity/TimeInterval,lineItem/UnblendedCost,lineItem/LineItemType,resourceTags/user:team\n" +
		"2026-01-01T01:00:00Z/2026-01-01T02:00:00Z,0.5,Usage\n"
	rows, _, err := readAll(t, strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r.ChargePeriodStart.Hour() != 1 || r.ChargePeriodEnd.Hour() != 2 || r.Team != "" || r.BillingPeriodStart.Day() != 1 {
		t.Errorf("row %+v", r)
	}
}

func TestTagsMapIsReusedButCloneIsStable(t *testing.T) {
	t.Parallel()
	in := "lineItem/UsageStartDate,lineItem/UnblendedCost,resourceTags/user:team\n" +
		"2026-01-01T00:00:00Z,1,a\n2026-01-01T00:00:00Z,1,b\n"
	rd, err := Open(strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var row Row
	if err := rd.Next(&row); err != nil {
		t.Fatal(err)
	}
	kept := row.Clone()
	if err := rd.Next(&row); err != nil {
		t.Fatal(err)
	}
	if kept.Tags["team"] != "a" || row.Tags["team"] != "b" || kept.Team != "a" {
		t.Errorf("kept %v / %q, current %v", kept.Tags, kept.Team, row.Tags)
	}
	if err := rd.Next(&row); err != io.EOF {
		t.Errorf("end: %v", err)
	}
	if err := rd.Next(&row); err != io.EOF {
		t.Errorf("after end: %v", err)
	}
	if rd.Line() != 3 || len(rd.Header()) != 3 {
		t.Errorf("line %d header %v", rd.Line(), rd.Header())
	}
}
