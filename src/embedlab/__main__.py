from embedlab.cli import main

raise SystemExit(main())
