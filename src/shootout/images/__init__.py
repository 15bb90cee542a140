"""Systems the user brings: disk images and second roots, read and never written.

  unpack.py   a compressed image unpacked once into shootout's cache, keyed by its checksum
  layout.py   its partition table, and which partition is the root (cmdline.txt's root=, else
              the Linux filesystem holding /etc/os-release)
  attach.py   a root attached read-only (loop device, read-only mount) under a writable overlay,
              every step through the change journal
  inspect.py  what the root is: os-release, Debian architecture, release; cached per image
"""
