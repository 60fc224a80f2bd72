from xnf.cli import main

raise SystemExit(main())
