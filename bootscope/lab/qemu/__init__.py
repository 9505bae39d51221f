"""What a QEMU guest needs: the QEMU process, the accelerator probe, kernels, initramfs
images, system images and the machine `image serve` runs."""
