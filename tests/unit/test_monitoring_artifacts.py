"""The monitoring that ships beside the DaemonSet: the Grafana dashboard asks only for metrics the exporter serves
(a renamed metric would leave a panel empty without an error), and the ServiceMonitor scrapes the metrics Service
by its labels and port, keeping xnf's instance label. (tests/integration/test_exporter.py runs every query of the
dashboard against a real Prometheus.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from xnf import exporter

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "xnf-dashboard.json"
SERVICE = ROOT / "deploy" / "kubernetes" / "xnf-service.yaml"
MONITOR = ROOT / "deploy" / "kubernetes" / "monitoring" / "xnf-servicemonitor.yaml"


def served() -> set[str]:
    return {f"{name}_total" for name in exporter.COUNTERS} | set(exporter.GAUGES)


def test_the_dashboard_asks_only_for_metrics_the_exporter_serves():
    panels = json.loads(DASHBOARD.read_text())["panels"]
    asked = {name for panel in panels for target in panel["targets"]
             for name in re.findall(r"\bxnf_[a-z_]+", target["expr"])}
    assert asked and asked <= served(), asked - served()
    assert {"xnf_packets_total", "xnf_worker_packets_total", "xnf_offloaded_rules", "xnf_up"} <= asked


def test_the_service_monitor_scrapes_the_metrics_service_keeping_xnfs_instance_label():
    service, monitor = yaml.safe_load(SERVICE.read_text()), yaml.safe_load(MONITOR.read_text())
    assert monitor["kind"] == "ServiceMonitor" and monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert service["metadata"]["namespace"] in monitor["spec"]["namespaceSelector"]["matchNames"]
    ports = {p["name"] for p in service["spec"]["ports"]}
    assert all(e["port"] in ports and e["honorLabels"] is True for e in monitor["spec"]["endpoints"])
