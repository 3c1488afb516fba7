from agentic_codemod.cli import main

raise SystemExit(main())
