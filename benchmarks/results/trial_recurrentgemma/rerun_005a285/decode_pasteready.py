from torch.export import Dim
from recurrentgemma.torch.modules import AttentionBlockCache
from recurrentgemma.torch.modules import RecurrentBlockCache

batch = Dim('batch')
dynamic_shapes = {'tokens': {0: batch}, 'segment_pos': {0: batch}, 'cache': {'blocks.0': RecurrentBlockCache({0: batch}, {0: batch}), 'blocks.1': AttentionBlockCache({0: batch}, {0: batch}, {0: batch}), 'blocks.2': RecurrentBlockCache({0: batch}, {0: batch})}}
# args, kwargs: example inputs with every dynamic dim at least 2 (torch specialises a size of 1)
ep = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)
