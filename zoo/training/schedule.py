"""The learning-rate schedule the zoo's recipes share: steps down by ten at given epochs."""


def step_schedule(learning_rate, decay_epochs):
    """A ``LearningRateScheduler`` function: ``learning_rate`` divided by 10 at each epoch
    of ``decay_epochs`` reached."""
    def schedule(epoch):
        return learning_rate * 0.1 ** sum(epoch >= boundary for boundary in decay_epochs)
    return schedule
