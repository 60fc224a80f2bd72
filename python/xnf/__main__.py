from xnf.commands.main import main

raise SystemExit(main())
