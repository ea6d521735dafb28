#!/bin/sh
# Turn the citations of the design and PTS digests that are not in the repository (DESIGN.md,
# PTS.md, PTS-EXTENDED.md) into citations of docs/design.md and docs/pts-reference.md by their
# anchors: in the Python sources of src/ and tests/ (recorded run directories under tests/fixtures
# keep what the version that made them wrote), and in docs/*.md and README.md. Specific phrases
# first, then each section's fallback; the count of citations left is printed at the end (the
# goal: 0).
#
#   scripts/cite-docs.sh [ROOT]     ROOT: the repository (default: this script's parent)
set -eu
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT"

D=docs/design.md
P=docs/pts-reference.md

files() {
    { find src tests -name '*.py' -not -path 'tests/fixtures/*' -print0; find docs README.md -maxdepth 1 -name '*.md' -print0; } |
        xargs -0 grep -l -e 'DESIGN\.md' -e 'PTS\.md' -e 'PTS-EXTENDED\.md' 2>/dev/null || true
}

set -- \
    -e "s|shared/PTS\\.md|PTS.md|g" \
    -e "s|shared/PTS-EXTENDED\\.md|PTS-EXTENDED.md|g" \
    -e "s|DESIGN\\.md conventions 8, 9|$D#user-error, #say-what-next|g" \
    -e "s|DESIGN\\.md conventions 1 and 2|$D#frozen-records, #units-in-names|g" \
    -e "s|DESIGN\\.md convention 2|$D#units-in-names|g" \
    -e "s|DESIGN\\.md convention 3|$D#one-place-per-field|g" \
    -e "s|DESIGN\\.md convention 6|$D#main-pipeline|g" \
    -e "s|DESIGN\\.md convention 8|$D#user-error|g" \
    -e "s|DESIGN\\.md \"The run directory\"|$D#run-directory|g" \
    -e "s|DESIGN\\.md \"Safety\"|$D#safety|g" \
    -e "s|DESIGN\\.md names run directories|$D#run-directory names run directories|g" \
    -e "s|source of truth (DESIGN\\.md)|source of truth ($D#read-the-store)|g" \
    -e "s|DESIGN\\.md|$D|g" \
    -e "s|PTS-EXTENDED\\.md \"CBW\", \"DIRTH\"|$P#cbw, #dirth|g" \
    -e "s|PTS-EXTENDED\\.md \"XSR\"|$P#xsr|g" \
    -e "s|PTS-EXTENDED\\.md \"HIR\"|$P#hir|g" \
    -e "s|PTS-EXTENDED\\.md \"CBW\"|$P#cbw|g" \
    -e "s|PTS-EXTENDED\\.md \"DIRTH\"|$P#dirth|g" \
    -e "s|PTS-EXTENDED\\.md \"WSAT options\"|$P#wsat-options|g" \
    -e "s|PTS-EXTENDED\\.md \"Client specifics\"|$P#client|g" \
    -e "s|(XSR, PTS-EXTENDED\\.md)|(XSR, $P#xsr)|g" \
    -e "s|(HIR, PTS-EXTENDED\\.md)|(HIR, $P#hir)|g" \
    -e "s|(CBW/ECW and DIRTH, PTS-EXTENDED\\.md)|(CBW/ECW and DIRTH, $P#cbw, #dirth)|g" \
    -e "s|(CBW, PTS-EXTENDED\\.md)|(CBW, $P#cbw)|g" \
    -e "s|PTS-EXTENDED\\.md: ~15\\.5 h|$P#hir: ~15.5 h|g" \
    -e "s|alike (PTS-EXTENDED\\.md)|alike ($P#hir)|g" \
    -e "s|\\[?\\] in PTS-EXTENDED\\.md|[impl] in $P|g" \
    -e "s|PTS-EXTENDED\\.md|$P#extended|g" \
    -e "s|PTS 2\\.0\\.2 §7 / PTS\\.md §3|PTS 2.0.2 §7, $P#iops|g" \
    -e "s|PTS 2\\.0\\.2 §2\\.1\\.24 (PTS\\.md §2)|PTS 2.0.2 §2.1.24 ($P#steady-state)|g" \
    -e "s|PTS 2\\.0\\.2 §2\\.1\\.24 (PTS\\.md §2|PTS 2.0.2 §2.1.24 ($P#steady-state|g" \
    -e "s|PTS\\.md §1 \"Units\"|$P#units|g" \
    -e "s|PTS\\.md §1 \"WDPC\"|$P#wdpc|g" \
    -e "s|\`iodepth=QD\` (PTS\\.md §1)|\`iodepth=QD\` ($P#demand-intensity)|g" \
    -e "s|≥ 48-bit RNG for LBAs, PTS\\.md §1|≥ 48-bit RNG for LBAs, $P#data-pattern|g" \
    -e "s|as seed 004 recommends (PTS\\.md §5)|as $D#repeated-runs sets out|g" \
    -e "s|PTS\\.md §1: TC = numjobs|$P#demand-intensity: TC = numjobs|g" \
    -e "s|TC = numjobs, QD = iodepth (PTS\\.md §1|TC = numjobs, QD = iodepth ($P#demand-intensity|g" \
    -e "s|QD = fio iodepth (PTS\\.md §1)|QD = fio iodepth ($P#demand-intensity)|g" \
    -e "s|TC x QD (PTS\\.md §1)|TC x QD ($P#demand-intensity)|g" \
    -e "s|the active range (PTS\\.md §1)|the active range ($P#wipc)|g" \
    -e "s|the active range, PTS\\.md §1)|the active range, $P#wipc)|g" \
    -e "s|PTS\\.md §1: Enterprise TP may use|$P#wipc: Enterprise TP may use|g" \
    -e "s|(PTS\\.md §1, §3)|($P#terms, #tests)|g" \
    -e "s|PTS\\.md §1, PTS-EXTENDED\\.md \"Client specifics\"|$P#segmentation, #client|g" \
    -e "s|PTS\\.md §1, $P#client|$P#segmentation, #client|g" \
    -e "s|parameter sets (PTS\\.md §1)|parameter sets ($P#versions)|g" \
    -e "s|Client WCE; PTS\\.md §1|Client WCE; $P#write-cache|g" \
    -e "s|\"Purge\", PTS\\.md §1|\"Purge\", $P#purge|g" \
    -e "s|§3\\.2, PTS\\.md §1|§3.2, $P#purge|g" \
    -e "s|LBA format in use (PTS\\.md §1)|LBA format in use ($P#purge)|g" \
    -e "s|PTS\\.md §1|$P#units|g" \
    -e "s|PTS\\.md §2, §4|$P#steady-state, #report-header|g" \
    -e "s|PTS\\.md §2|$P#steady-state|g" \
    -e "s|Throughput test (PTS\\.md §3)|Throughput test ($P#tp)|g" \
    -e "s|throughput test's pages (PTS\\.md §3)|throughput test's pages ($P#tp)|g" \
    -e "s|Write Saturation test (PTS\\.md §3)|Write Saturation test ($P#wsat)|g" \
    -e "s|write saturation test's pages (PTS\\.md §3, PTS 2\\.0 options)|write saturation test's pages ($P#wsat, #wsat-options)|g" \
    -e "s|(PTS\\.md §3: WSAT has no|($P#wsat: WSAT has no|g" \
    -e "s|Latency test (PTS\\.md §3)|Latency test ($P#lat)|g" \
    -e "s|latency test's pages (PTS\\.md §3)|latency test's pages ($P#lat)|g" \
    -e "s|IOPS test's pages (PTS\\.md §3)|IOPS test's pages ($P#iops)|g" \
    -e "s|one line per R/W mix, log-log (PTS\\.md §3)|one line per R/W mix, log-log ($P#iops)|g" \
    -e "s|PTS\\.md §3|$P#tests|g" \
    -e "s|PTS\\.md §4 \"Test platform\", §5, §6|$P#report-header, $D#host-settings, #data-set|g" \
    -e "s|PTS\\.md §4|$P#report-header|g" \
    -e "s|Honest comparisons (PTS\\.md §5, seed 004)|Honest comparisons ($D#repeated-runs)|g" \
    -e "s|Definitions (seed 004, PTS\\.md §5)|Definitions ($D#repeated-runs)|g" \
    -e "s|seed 004's \"synthetic\" settings (PTS\\.md §5)|the host settings for a measurement ($D#host-settings)|g" \
    -e "s|seed 004's \"synthetic\" platform settings in their Linux form (PTS\\.md §5)|the host settings for a measurement in their Linux form ($D#host-settings)|g" \
    -e "s|PTS\\.md §5|$D#host-settings|g" \
    -e "s|Seed 002 (PTS\\.md §6)|The data set ($D#data-set)|g" \
    -e "s|seed 002's data-set view, |the data set, |g" \
    -e "s|PTS\\.md §6|$D#data-set|g" \
    -e "s|(PTS\\.md: disclose the engine)|($P#report-header: the test software disclosed)|g" \
    -e "s|PTS 2\\.0\\.2; PTS\\.md)|PTS 2.0.2; $P)|g" \
    -e "s|PTS\\.md|$P|g"

files | while IFS= read -r f; do sed -i "$@" "$f"; done

left=$(grep -rn --include='*.py' -e 'DESIGN\.md' -e 'PTS\.md' -e 'PTS-EXTENDED\.md' src tests 2>/dev/null |
       grep -v '^tests/fixtures/' | grep -c . || true)
docs=$(grep -n -e 'DESIGN\.md' -e 'PTS\.md' -e 'PTS-EXTENDED\.md' docs/*.md README.md 2>/dev/null | grep -c . || true)
echo "citations of DESIGN.md, PTS.md and PTS-EXTENDED.md left in src/ and tests/: $left; in docs/ and README.md: $docs"
