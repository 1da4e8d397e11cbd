"""zoo: model definitions and the pretrained-weight registry (DESIGN.md §6).

AlexNet, ResNet and the Deep Speech style model arrive with the Keras layers.
"""
