import math
import time

import numpy as np
import torch

_ = torch.manual_seed(0)  # reproducible examples
