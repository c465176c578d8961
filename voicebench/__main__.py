from voicebench.cli import main

main()
