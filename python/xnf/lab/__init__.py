"""The lab: emulated edge servers built from network namespaces and veth pairs."""
